import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { paymentEvents, usageEvents } from "../../db/schema/index.ts";
import { deliver, invoiceObject, signatureFor, stripeEvent, subscriptionObject, TEST_PLANS, WEBHOOK_SECRET } from "../support/billing.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ env: { PLANS: JSON.stringify(TEST_PLANS), STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET } });
}, 60_000);
afterAll(() => server.stop());

const db = () => server.services.deps.db;
const processed = async (eventId: string) => db().select().from(paymentEvents).where(eq(paymentEvents.eventId, eventId));
const ledger = async (org: TestOrg) => db().select().from(usageEvents).where(eq(usageEvents.orgId, org.orgId));
const subscriptionOf = async (org: TestOrg) => (await org.admin.get("/api/billing/subscription")).body;
const seconds = () => Math.floor(Date.now() / 1000);

/** An organization already linked to a provider customer by a first subscription event. */
async function subscribed(price = "price_pro_monthly") {
  const org = await newOrg(server);
  const customer = `cus_${org.orgId.slice(0, 8)}`;
  const res = await deliver(server.url, stripeEvent("customer.subscription.created", subscriptionObject({ customer, orgId: org.orgId, price })));
  expect(res.status).toBe(200);
  return { org, customer };
}

describe("verified events are applied", () => {
  test("subscription created: the organization is linked to the customer and moves to the plan", async () => {
    const org = await newOrg(server);
    const start = seconds();
    const event = stripeEvent(
      "customer.subscription.created",
      subscriptionObject({ id: "sub_a", customer: "cus_created", orgId: org.orgId, price: "price_pro_monthly", periodStart: start, periodEnd: start + 30 * 86_400 }),
    );
    // No Authorization header: the signature is the credential.
    const res = await deliver(server.url, event);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, eventId: event.id, outcome: "applied" });
    expect(await subscriptionOf(org)).toMatchObject({
      plan: { key: "pro" },
      status: "active",
      allocatedStorage: 100_000,
      provider: { customerId: "cus_created", subscriptionId: "sub_a" },
      currentPeriod: { start: new Date(start * 1000).toISOString(), end: new Date((start + 30 * 86_400) * 1000).toISOString() },
    });
    expect((await org.admin.get("/api/usage")).body).toMatchObject({ plan: "pro", allocatedStorage: 100_000 });
    const [changed] = (await ledger(org)).filter((e) => e.type === "plan_changed");
    expect(changed).toMatchObject({ delta: 90_000, details: { from: "free", to: "pro", source: "provider", eventId: event.id } });
    expect(await processed(event.id)).toEqual([expect.objectContaining({ type: "customer.subscription.created", orgId: org.orgId })]);
  });

  test("a plan is also recognized by its price lookup key; later events find the organization by customer id", async () => {
    const { org, customer } = await subscribed();
    const res = await deliver(server.url, stripeEvent("customer.subscription.updated", subscriptionObject({ customer, lookupKey: "business" })));
    expect(res.body.outcome).toBe("applied");
    expect(await subscriptionOf(org)).toMatchObject({ plan: { key: "business" }, allocatedStorage: 1_000_000 });
  });

  test("payment failed makes the account past_due; paid settles it; both are in the ledger", async () => {
    const { org, customer } = await subscribed();
    await deliver(server.url, stripeEvent("invoice.payment_failed", invoiceObject({ id: "in_f", customer, amountDue: 1500 })));
    expect((await subscriptionOf(org)).status).toBe("past_due");
    await deliver(server.url, stripeEvent("invoice.paid", invoiceObject({ id: "in_f", customer, amountPaid: 1500 })));
    expect((await subscriptionOf(org)).status).toBe("active");
    const events = (await org.admin.get("/api/usage/events")).body.data;
    expect(events.slice(0, 2).map((e: any) => [e.type, e.amountCents, e.details.invoiceId])).toEqual([
      ["invoice_paid", 1500, "in_f"],
      ["invoice_payment_failed", 1500, "in_f"],
    ]);
  });

  test("subscription deleted: back to the free tier, status canceled, bought capacity kept", async () => {
    const { org, customer } = await subscribed();
    await org.admin.post("/api/billing/capacity/add", { gb: 1 });
    const res = await deliver(server.url, stripeEvent("customer.subscription.deleted", subscriptionObject({ customer, status: "canceled", price: "price_pro_monthly" })));
    expect(res.body.outcome).toBe("applied");
    expect(await subscriptionOf(org)).toMatchObject({ plan: { key: "free" }, status: "canceled", allocatedStorage: 10_000 + 1024 ** 3 });
  });

  test("an event older than the subscription state already applied is ignored", async () => {
    const { org, customer } = await subscribed();
    const stale = stripeEvent("customer.subscription.updated", subscriptionObject({ customer, lookupKey: "business" }), { created: seconds() - 3600 });
    const res = await deliver(server.url, stale);
    expect(res.body.outcome).toBe("ignored");
    expect((await subscriptionOf(org)).plan.key).toBe("pro");
  });

  test("unknown event types, and events for no known organization, are acknowledged and ignored", async () => {
    const org = await newOrg(server);
    const before = (await ledger(org)).length;
    const unknown = stripeEvent("customer.created", { id: "cus_x", object: "customer", metadata: { org_id: org.orgId } });
    expect((await deliver(server.url, unknown)).body).toMatchObject({ outcome: "ignored" });
    const stranger = stripeEvent("invoice.paid", invoiceObject({ customer: "cus_nobody", amountPaid: 100 }));
    expect((await deliver(server.url, stranger)).body).toMatchObject({ outcome: "ignored" });
    const foreign = stripeEvent("invoice.paid", invoiceObject({ customer: "cus_nobody2", amountPaid: 100, orgId: crypto.randomUUID() }));
    expect((await deliver(server.url, foreign)).body).toMatchObject({ outcome: "ignored" });
    expect((await ledger(org)).length).toBe(before);
    // still deduplicated: a redelivery is recognized
    expect((await deliver(server.url, unknown)).body).toMatchObject({ outcome: "duplicate" });
  });
});

describe("deduplication", () => {
  test("an event delivered three times concurrently applies once", async () => {
    const { org, customer } = await subscribed();
    const paid = stripeEvent("invoice.paid", invoiceObject({ id: "in_dup", customer, amountPaid: 1500 }));
    const body = JSON.stringify(paid);
    const signature = await signatureFor(body);
    const results = await Promise.all([1, 2, 3].map(() => deliver(server.url, body, { signature })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(results.map((r) => r.body.outcome).sort()).toEqual(["applied", "duplicate", "duplicate"]);
    expect((await ledger(org)).filter((e) => e.type === "invoice_paid")).toHaveLength(1);
    expect(await processed(paid.id)).toHaveLength(1);

    // a plan change delivered three times concurrently changes the plan once
    const upgrade = stripeEvent("customer.subscription.updated", subscriptionObject({ customer, lookupKey: "business" }));
    const upgrades = await Promise.all([1, 2, 3].map(() => deliver(server.url, upgrade)));
    expect(upgrades.map((r) => r.body.outcome).sort()).toEqual(["applied", "duplicate", "duplicate"]);
    expect((await ledger(org)).filter((e) => e.type === "plan_changed" && e.details.eventId === upgrade.id)).toHaveLength(1);
  });
});

describe("signatures", () => {
  async function refused(res: Awaited<ReturnType<typeof deliver>>, reason: string) {
    expect(res.status).toBe(400);
    // Read before matching: Bun's toMatchObject writes asymmetric matchers into the object it checks.
    const { requestId } = res.body.error;
    expect(res.body.error).toMatchObject({ code: "bad_request", details: { reason } });
    expect(typeof requestId).toBe("string");
    expect(res.headers.get("x-request-id")).toBe(requestId);
  }

  test("a stale signature (older than 300 s) is refused and records nothing", async () => {
    const org = await newOrg(server);
    const event = stripeEvent("customer.subscription.created", subscriptionObject({ customer: "cus_stale", orgId: org.orgId, price: "price_pro_monthly" }));
    await refused(await deliver(server.url, event, { timestamp: seconds() - 301 }), "stale");
    expect(await processed(event.id)).toEqual([]);
    expect(await ledger(org)).toEqual([]);
    expect((await subscriptionOf(org)).plan.key).toBe("free");
    // within the tolerance it is accepted: nothing of the refused delivery was kept
    expect((await deliver(server.url, event, { timestamp: seconds() - 290 })).body.outcome).toBe("applied");
  });

  test("a tampered body, another secret, a missing or malformed header are refused and record nothing", async () => {
    const org = await newOrg(server);
    const event = stripeEvent("customer.subscription.created", subscriptionObject({ customer: "cus_tamper", orgId: org.orgId, price: "price_pro_monthly" }));
    const body = JSON.stringify(event);
    const signature = await signatureFor(body);
    await refused(await deliver(server.url, body.replace("price_pro_monthly", "price_business"), { signature }), "mismatch");
    await refused(await deliver(server.url, body, { secret: "whsec_someone_else" }), "mismatch");
    await refused(await deliver(server.url, body, { signature: null }), "missing");
    await refused(await deliver(server.url, body, { signature: "garbage" }), "malformed");
    await refused(await deliver(server.url, `${body} `, { signature }), "mismatch");
    expect(await processed(event.id)).toEqual([]);
    expect(await ledger(org)).toEqual([]);
    expect((await subscriptionOf(org)).plan.key).toBe("free");
  });

  test("any matching v1 signature is accepted (secret rotation sends several)", async () => {
    const org = await newOrg(server);
    const event = stripeEvent("customer.subscription.created", subscriptionObject({ customer: "cus_rotate", orgId: org.orgId, price: "price_pro_monthly" }));
    const body = JSON.stringify(event);
    const good = await signatureFor(body);
    const t = /t=(\d+)/.exec(good)![1];
    const v1 = /v1=([0-9a-f]+)/.exec(good)![1];
    const header = `t=${t},v1=${"0".repeat(64)},v0=ignored,v1=${v1}`;
    const res = await deliver(server.url, body, { signature: header });
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe("applied");
  });

  test("a signed body that is not JSON is 400", async () => {
    const res = await deliver(server.url, "not json");
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("bad_request");
  });
});
