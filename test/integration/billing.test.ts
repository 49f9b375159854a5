import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { billingCharges } from "../../db/schema/index.ts";
import { ManualClock } from "../../domain/core/clock.ts";
import type { Api } from "../support/http.ts";
import { deliver, GiB, stripeEvent, subscriptionObject, TEST_PLANS, WEBHOOK_SECRET } from "../support/billing.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";

let server: TestServer;
const clock = new ManualClock();
const MiB = 1024 * 1024;

beforeAll(async () => {
  // A webhook secret but no API key: the provider's API is "not configured", its events still arrive.
  server = await startServer({ clock, env: { PLANS: JSON.stringify(TEST_PLANS), STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET } });
}, 60_000);
afterAll(() => server.stop());

async function orgWithBucket() {
  const org = await newOrg(server);
  const bucket = (await org.admin.post("/api/buckets", { name: "billing" })).body as { id: string };
  return { org, bucket };
}

const subscriptionOf = async (api: Api) => {
  const res = await api.get("/api/billing/subscription");
  expect(res.status).toBe(200);
  return res.body;
};
const eventsOf = async (org: TestOrg, type: string) => (await org.admin.get(`/api/usage/events?type=${type}`)).body.data as any[];

/** Puts an organization on a plan the way production does: a signed subscription event. */
async function subscribe(org: TestOrg, price: string, customer = `cus_${org.orgId.slice(0, 8)}`) {
  const res = await deliver(server.url, stripeEvent("customer.subscription.created", subscriptionObject({ customer, orgId: org.orgId, price })));
  expect(res.status).toBe(200);
  expect(res.body.outcome).toBe("applied");
}

/** Presign and PUT now; confirm separately (so tests can confirm concurrently or at another time). */
async function put(api: Api, bucketId: string, key: string, body: Uint8Array<ArrayBuffer>) {
  // With its size: the allocation here is 10,000 bytes, and a URL without one counts the
  // unsized maximum against it until confirmed (docs/conventions.md).
  const p = await api.post("/api/presign/upload", { bucketId, key, size: body.length });
  expect((await fetch(p.body.url, { method: "PUT", headers: p.body.headers, body })).status).toBe(200);
  return () => api.post("/api/presign/confirm", { bucketId, key });
}

describe("subscription", () => {
  test("a new organization is on the first configured tier, with auto-capacity off", async () => {
    const { org } = await orgWithBucket();
    const s = await subscriptionOf(org.admin);
    const now = clock.now();
    expect(s).toEqual({
      plan: { key: "free", name: "Free", includedStorage: 10_000, priceCents: 0, capacityPriceCentsPerGb: 100 },
      status: "active",
      includedStorage: 10_000,
      extraStorage: 0,
      allocatedStorage: 10_000,
      usedStorage: 0,
      currentPeriod: {
        start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
        end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      },
      autoCapacity: { enabled: false, incrementGb: 10, thresholdPct: 90, maxMonthlySpendCents: 0 },
      capacitySpentThisMonthCents: 0,
      provider: { name: null, customerId: null, subscriptionId: null },
      plans: TEST_PLANS.map(({ stripePriceId: _, ...p }) => p),
    });
    expect((await org.admin.get("/api/usage")).body).toMatchObject({ allocatedStorage: 10_000, plan: "free" });
  });
});

describe("capacity", () => {
  test("adding capacity raises the allocation, records the charge in cents and a ledger event", async () => {
    const { org } = await orgWithBucket();
    const res = await org.admin.post("/api/billing/capacity/add", { gb: 2 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ gb: 2, addedStorage: 2 * GiB, amountCents: 200, allocatedStorage: 10_000 + 2 * GiB, extraStorage: 2 * GiB });
    expect((await org.admin.get("/api/usage")).body.allocatedStorage).toBe(10_000 + 2 * GiB);
    expect(await subscriptionOf(org.admin)).toMatchObject({ extraStorage: 2 * GiB, allocatedStorage: 10_000 + 2 * GiB, capacitySpentThisMonthCents: 200 });
    const charges = await server.services.deps.db.select().from(billingCharges).where(eq(billingCharges.orgId, org.orgId));
    expect(charges).toEqual([expect.objectContaining({ id: res.body.chargeId, kind: "capacity", gb: 2, amountCents: 200 })]);
    expect(await eventsOf(org, "capacity_added")).toEqual([
      expect.objectContaining({ bytes: 2 * GiB, delta: 2 * GiB, amountCents: 200, details: expect.objectContaining({ gb: 2, chargeId: res.body.chargeId }) }),
    ]);
    // and uploads may now use it
    const history = (await org.admin.get("/api/usage/history?days=1")).body.data;
    expect(history[0].allocatedStorage).toBe(10_000 + 2 * GiB);
  });

  test("gb is an integer from 1 to 10240", async () => {
    const { org } = await orgWithBucket();
    for (const gb of [0, -1, 1.5, 10_241, "2", null]) {
      const res = await org.admin.post("/api/billing/capacity/add", { gb });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].path).toBe("gb");
    }
    expect((await org.admin.post("/api/billing/capacity/add", {})).status).toBe(400);
    expect((await org.admin.get("/api/usage")).body.allocatedStorage).toBe(10_000);
  });
});

const settings = { enabled: true, incrementGb: 1, thresholdPct: 80, maxMonthlySpendCents: 1_000 };

describe("auto-capacity", () => {

  test("settings are validated and stored", async () => {
    const { org } = await orgWithBucket();
    const bad: [Record<string, unknown>, string][] = [
      [{ ...settings, incrementGb: 0 }, "incrementGb"],
      [{ ...settings, incrementGb: 1.5 }, "incrementGb"],
      [{ ...settings, thresholdPct: 0 }, "thresholdPct"],
      [{ ...settings, thresholdPct: 101 }, "thresholdPct"],
      [{ ...settings, maxMonthlySpendCents: -1 }, "maxMonthlySpendCents"],
      [{ ...settings, enabled: "yes" }, "enabled"],
      [{ incrementGb: 1, thresholdPct: 80, maxMonthlySpendCents: 0 }, "enabled"],
    ];
    for (const [body, path] of bad) {
      const res = await org.admin.put("/api/billing/capacity/auto", body);
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await subscriptionOf(org.admin)).autoCapacity.enabled).toBe(false);
    const ok = await org.admin.put("/api/billing/capacity/auto", { enabled: true, incrementGb: 5, thresholdPct: 100, maxMonthlySpendCents: 0 });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ enabled: true, incrementGb: 5, thresholdPct: 100, maxMonthlySpendCents: 0 });
    expect((await subscriptionOf(org.admin)).autoCapacity).toEqual(ok.body);
  });

  test("fires once when a confirm pushes usage over the threshold", async () => {
    const { org, bucket } = await orgWithBucket();
    expect((await org.admin.put("/api/billing/capacity/auto", settings)).status).toBe(200);
    await upload(org.admin, bucket.id, "a", bytesOf(7_000));
    await upload(org.admin, bucket.id, "b", bytesOf(900)); // 79%: not yet
    expect((await org.admin.get("/api/usage")).body.allocatedStorage).toBe(10_000);
    expect(await eventsOf(org, "auto_capacity")).toEqual([]);
    await upload(org.admin, bucket.id, "c", bytesOf(200)); // 81%
    const after = (await org.admin.get("/api/usage")).body;
    expect(after.allocatedStorage).toBe(10_000 + GiB);
    const fired = await eventsOf(org, "auto_capacity");
    expect(fired).toEqual([
      expect.objectContaining({
        bytes: GiB,
        delta: GiB,
        amountCents: 100,
        details: expect.objectContaining({ gb: 1, thresholdPct: 80, usedStorage: 8_100, allocatedBefore: 10_000, allocatedStorage: 10_000 + GiB }),
      }),
    ]);
    // more uploads far below the new threshold buy nothing more
    await upload(org.admin, bucket.id, "d", bytesOf(1_000));
    expect(await eventsOf(org, "auto_capacity")).toHaveLength(1);
    expect((await subscriptionOf(org.admin)).capacitySpentThisMonthCents).toBe(100);
  });

  test("fires once for one crossing even when the confirms that cross it run concurrently", async () => {
    const { org, bucket } = await orgWithBucket();
    expect((await org.admin.put("/api/billing/capacity/auto", { ...settings, thresholdPct: 50 })).status).toBe(200);
    const confirms = [];
    for (let i = 0; i < 10; i++) confirms.push(await put(org.admin, bucket.id, `c${i}`, bytesOf(1_000, i)));
    const results = await Promise.all(confirms.map((c) => c()));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    // A sized confirm appends its bytes for the usage rollup; the one that crosses may be seen
    // there rather than on its own path when they race: folded now, it has bought once.
    await server.services.rollup.flush();
    expect(await eventsOf(org, "auto_capacity")).toHaveLength(1);
    expect((await org.admin.get("/api/usage")).body).toMatchObject({ usedStorage: 10_000, allocatedStorage: 10_000 + GiB });
    const charges = await server.services.deps.db.select().from(billingCharges).where(eq(billingCharges.orgId, org.orgId));
    expect(charges).toHaveLength(1);
  });

  test("respects the monthly spend cap, which counts this calendar month's capacity charges", async () => {
    const { org, bucket } = await orgWithBucket();
    // 1% threshold, so a second crossing is reachable after a 1 GiB increment (100 cents each)
    expect((await org.admin.put("/api/billing/capacity/auto", { enabled: true, incrementGb: 1, thresholdPct: 1, maxMonthlySpendCents: 150 })).status).toBe(200);
    await upload(org.admin, bucket.id, "small", bytesOf(200));
    expect(await eventsOf(org, "auto_capacity")).toHaveLength(1);
    await upload(org.admin, bucket.id, "big", bytesOf(11 * MiB)); // over 1% of 1 GiB again, but 100 + 100 > 150
    expect(await eventsOf(org, "auto_capacity")).toHaveLength(1);
    expect((await org.admin.get("/api/usage")).body.allocatedStorage).toBe(10_000 + GiB);
    expect((await org.admin.put("/api/billing/capacity/auto", { enabled: true, incrementGb: 1, thresholdPct: 1, maxMonthlySpendCents: 200 })).status).toBe(200);
    await upload(org.admin, bucket.id, "more", bytesOf(100)); // 100 + 100 <= 200
    expect(await eventsOf(org, "auto_capacity")).toHaveLength(2);
    expect((await org.admin.get("/api/usage")).body.allocatedStorage).toBe(10_000 + 2 * GiB);
    expect((await subscriptionOf(org.admin)).capacitySpentThisMonthCents).toBe(200);
    // a new month starts from zero spend
    const confirmLater = await put(org.admin, bucket.id, "next-month", bytesOf(11 * MiB, 3));
    const saved = clock.now();
    const next = new Date(Date.UTC(saved.getUTCFullYear(), saved.getUTCMonth() + 1, 1, 1));
    clock.set(next);
    try {
      expect((await confirmLater()).status).toBe(200);
      expect(await eventsOf(org, "auto_capacity")).toHaveLength(3);
      expect((await subscriptionOf(org.admin)).capacitySpentThisMonthCents).toBe(100);
    } finally {
      clock.set(saved);
    }
  }, 30_000);

  test("disabled auto-capacity never fires; shrinking overwrites never fire", async () => {
    const { org, bucket } = await orgWithBucket();
    await upload(org.admin, bucket.id, "x", bytesOf(9_500));
    // The usage rollup folds that upload's bytes while auto-capacity is still off (on a busy
    // machine its next turn could otherwise come after the setting, and fire for this growth).
    await server.services.rollup.flush();
    expect(await eventsOf(org, "auto_capacity")).toEqual([]);
    expect((await org.admin.put("/api/billing/capacity/auto", { ...settings, thresholdPct: 90 })).status).toBe(200);
    await upload(org.admin, bucket.id, "x", bytesOf(9_400, 2)); // still 94%, but smaller
    expect(await eventsOf(org, "auto_capacity")).toEqual([]);
  });
});

describe("downgrade", () => {
  test("unknown tiers are 400; a more expensive tier is 409; the current tier changes nothing", async () => {
    const { org } = await orgWithBucket();
    const unknown = await org.admin.post("/api/billing/downgrade", { tierKey: "platinum" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: "validation_error", details: [{ path: "tierKey", message: expect.stringContaining("free, pro, business") }] });
    const up = await org.admin.post("/api/billing/downgrade", { tierKey: "pro" });
    expect(up.status).toBe(409);
    expect(up.body.error.code).toBe("conflict");
    const same = await org.admin.post("/api/billing/downgrade", { tierKey: "free" });
    expect(same.status).toBe(200);
    expect(same.body.plan.key).toBe("free");
    expect(await eventsOf(org, "plan_changed")).toEqual([]);
  });

  test("409 while usage exceeds the target plan; succeeds once it fits", async () => {
    const { org, bucket } = await orgWithBucket();
    await subscribe(org, "price_pro_monthly");
    expect(await subscriptionOf(org.admin)).toMatchObject({ plan: { key: "pro" }, allocatedStorage: 100_000 });
    const big = await upload(org.admin, bucket.id, "big", bytesOf(20_000));
    const refused = await org.admin.post("/api/billing/downgrade", { tierKey: "free" });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "conflict", details: { usedStorage: 20_000, targetStorage: 10_000, includedStorage: 10_000, extraStorage: 0 } });
    expect(await subscriptionOf(org.admin)).toMatchObject({ plan: { key: "pro" }, allocatedStorage: 100_000 });
    await org.admin.delete(`/api/media/${big.id}`);
    await upload(org.admin, bucket.id, "small", bytesOf(4_000));
    const ok = await org.admin.post("/api/billing/downgrade", { tierKey: "free" });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ plan: { key: "free" }, allocatedStorage: 10_000, usedStorage: 4_000 });
    expect((await org.admin.get("/api/usage")).body).toMatchObject({ plan: "free", allocatedStorage: 10_000 });
    const changes = await eventsOf(org, "plan_changed");
    expect(changes[0]).toMatchObject({ delta: -90_000, details: { from: "pro", to: "free", source: "api", allocatedStorage: 10_000 } });
  });

  test("capacity bought stays with the organization and counts towards the target", async () => {
    const { org, bucket } = await orgWithBucket();
    await subscribe(org, "price_pro_monthly");
    await org.admin.post("/api/billing/capacity/add", { gb: 1 });
    await upload(org.admin, bucket.id, "big", bytesOf(20_000));
    const ok = await org.admin.post("/api/billing/downgrade", { tierKey: "free" });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ plan: { key: "free" }, includedStorage: 10_000, extraStorage: GiB, allocatedStorage: 10_000 + GiB });
  });
});

describe("payment provider not configured", () => {
  test("invoices and portal answer 501 not_configured", async () => {
    const { org } = await orgWithBucket();
    for (const path of ["/api/billing/invoices", "/api/billing/portal"]) {
      const res = await org.admin.get(path);
      expect(res.status).toBe(501);
      expect(res.body.error).toMatchObject({ code: "not_configured", requestId: expect.any(String) });
    }
  });
});

describe("access", () => {
  const routes: [string, string, unknown?][] = [
    ["GET", "/api/billing/subscription"],
    ["POST", "/api/billing/capacity/add", { gb: 1 }],
    ["PUT", "/api/billing/capacity/auto", { enabled: true, incrementGb: 1, thresholdPct: 50, maxMonthlySpendCents: 100 }],
    ["POST", "/api/billing/downgrade", { tierKey: "free" }],
    ["GET", "/api/billing/invoices"],
    ["GET", "/api/billing/portal"],
  ];

  test("every billing route needs admin", async () => {
    const { org } = await orgWithBucket();
    const key = await org.keyClient(["read", "write", "delete"]);
    for (const [method, path, body] of routes) {
      const res = await key.call(method, path, body);
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 403`);
      expect(res.body.error.code).toBe("forbidden");
    }
    expect((await server.api.get("/api/billing/subscription")).status).toBe(401);
    expect((await org.admin.get("/api/usage")).body.allocatedStorage).toBe(10_000);
    // the same key reads usage
    expect((await key.get("/api/usage")).status).toBe(200);
  });

  test("one organization's purchases and settings never reach another", async () => {
    const a = await orgWithBucket();
    const b = await orgWithBucket();
    await a.org.admin.post("/api/billing/capacity/add", { gb: 3 });
    await a.org.admin.put("/api/billing/capacity/auto", settings);
    const seen = await subscriptionOf(b.org.admin);
    expect(seen).toMatchObject({ extraStorage: 0, allocatedStorage: 10_000, capacitySpentThisMonthCents: 0, autoCapacity: { enabled: false } });
    expect((await b.org.admin.get("/api/usage/events")).body.total).toBe(0);
  });
});

/**
 * A stand-in for Stripe's API on a local port, speaking its wire format (form-encoded
 * requests, JSON answers). The SDK is pointed at it with STRIPE_API_URL; nothing of ours is mocked.
 */
function fakeStripe() {
  // Customer ids unique across fakes: in the services pass every server of this file shares
  // one database, where a customer id belongs to one organization.
  const instance = crypto.randomUUID().slice(0, 8);
  const state = {
    customers: new Map<string, { id: string; name: string; orgId: string }>(),
    byIdempotencyKey: new Map<string, string>(),
    requests: [] as { method: string; path: string; body: string; idempotencyKey: string | null }[],
    failInvoices: false,
  };
  const listen = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body = await req.text();
      state.requests.push({ method: req.method, path: url.pathname + url.search, body, idempotencyKey: req.headers.get("idempotency-key") });
      if (req.headers.get("authorization") !== "Bearer sk_test_fake") return Response.json({ error: { type: "invalid_request_error", message: "bad key" } }, { status: 401 });
      const form = new URLSearchParams(body);
      if (req.method === "POST" && url.pathname === "/v1/customers") {
        const key = req.headers.get("idempotency-key") ?? crypto.randomUUID();
        let id = state.byIdempotencyKey.get(key);
        if (!id) {
          id = `cus_fake${instance}_${state.customers.size + 1}`;
          state.byIdempotencyKey.set(key, id);
          state.customers.set(id, { id, name: form.get("name") ?? "", orgId: form.get("metadata[org_id]") ?? "" });
        }
        return Response.json({ id, object: "customer", name: form.get("name"), metadata: { org_id: form.get("metadata[org_id]") } });
      }
      if (req.method === "GET" && url.pathname === "/v1/invoices") {
        if (state.failInvoices) return Response.json({ error: { type: "api_error", message: "down" } }, { status: 500 });
        const customer = url.searchParams.get("customer")!;
        return Response.json({
          object: "list",
          url: "/v1/invoices",
          has_more: true,
          data: [
            {
              id: "in_2",
              object: "invoice",
              customer,
              number: "ABC-0002",
              status: "open",
              currency: "usd",
              amount_due: 1500,
              amount_paid: 0,
              created: 1_790_000_000,
              period_start: 1_789_000_000,
              period_end: 1_790_000_000,
              hosted_invoice_url: "https://invoice.stripe.test/in_2",
              invoice_pdf: "https://invoice.stripe.test/in_2.pdf",
            },
            { id: "in_1", object: "invoice", customer, number: null, status: "paid", currency: "usd", amount_due: 1500, amount_paid: 1500, created: 1_780_000_000, period_start: 1_779_000_000, period_end: 1_780_000_000, hosted_invoice_url: null, invoice_pdf: null },
          ],
        });
      }
      if (req.method === "POST" && url.pathname === "/v1/billing_portal/sessions") {
        return Response.json({ id: "bps_1", object: "billing_portal.session", customer: form.get("customer"), return_url: form.get("return_url"), url: `https://billing.stripe.test/p/session/${form.get("customer")}` });
      }
      return Response.json({ error: { type: "invalid_request_error", message: "no such route" } }, { status: 404 });
    },
  });
  return { state, url: `http://127.0.0.1:${listen.port}`, stop: () => listen.stop(true) };
}

describe("with a payment provider", () => {
  let stripe: ReturnType<typeof fakeStripe>;
  let provided: TestServer;

  beforeAll(async () => {
    stripe = fakeStripe();
    provided = await startServer({ env: { PLANS: JSON.stringify(TEST_PLANS), STRIPE_SECRET_KEY: "sk_test_fake", STRIPE_API_URL: stripe.url } });
  }, 60_000);
  afterAll(async () => {
    await provided.stop();
    stripe.stop();
  });

  test("invoices are empty until the organization has a customer, without asking the provider", async () => {
    const org = await newOrg(provided);
    const res = await org.admin.get("/api/billing/invoices");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], total: 0, hasMore: false });
    expect(stripe.state.requests).toHaveLength(0);
  });

  test("the portal creates the customer once (even on concurrent first calls), then invoices are listed", async () => {
    const org = await newOrg(provided, "Acme Media");
    const portals = await Promise.all([1, 2, 3].map(() => org.admin.get("/api/billing/portal?returnUrl=https://app.example.test/billing")));
    expect(portals.map((p) => p.status)).toEqual([200, 200, 200]);
    const customerId = portals[0]!.body.customerId;
    expect(portals.every((p) => p.body.customerId === customerId)).toBe(true);
    expect(portals[0]!.body.url).toBe(`https://billing.stripe.test/p/session/${customerId}`);
    const created = [...stripe.state.customers.values()].filter((c) => c.orgId === org.orgId);
    expect(created).toEqual([{ id: customerId, name: "Acme Media", orgId: org.orgId }]);
    const session = stripe.state.requests.find((r) => r.path === "/v1/billing_portal/sessions")!;
    expect(new URLSearchParams(session.body).get("return_url")).toBe("https://app.example.test/billing");
    expect((await subscriptionOf(org.admin)).provider).toEqual({ name: "stripe", customerId, subscriptionId: null });

    const invoices = await org.admin.get("/api/billing/invoices?limit=2");
    expect(invoices.status).toBe(200);
    expect(invoices.body.hasMore).toBe(true);
    expect(invoices.body.data).toEqual([
      {
        id: "in_2",
        number: "ABC-0002",
        status: "open",
        currency: "usd",
        amountDueCents: 1500,
        amountPaidCents: 0,
        createdAt: new Date(1_790_000_000_000).toISOString(),
        periodStart: new Date(1_789_000_000_000).toISOString(),
        periodEnd: new Date(1_790_000_000_000).toISOString(),
        hostedInvoiceUrl: "https://invoice.stripe.test/in_2",
        invoicePdfUrl: "https://invoice.stripe.test/in_2.pdf",
      },
      expect.objectContaining({ id: "in_1", status: "paid", amountPaidCents: 1500, hostedInvoiceUrl: null }),
    ]);
    expect(stripe.state.requests.some((r) => r.path === `/v1/invoices?customer=${customerId}&limit=2`)).toBe(true);
  });

  test("a provider failure is 503 unavailable; the webhook without its secret is 501", async () => {
    const org = await newOrg(provided);
    await org.admin.get("/api/billing/portal");
    stripe.state.failInvoices = true;
    try {
      const res = await org.admin.get("/api/billing/invoices");
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("unavailable");
      expect(JSON.stringify(res.body)).not.toContain("down");
    } finally {
      stripe.state.failInvoices = false;
    }
    const hook = await deliver(provided.url, stripeEvent("invoice.paid", {}));
    expect(hook.status).toBe(501);
    expect(hook.body.error.code).toBe("not_configured");
  });
});

describe("invoices paging (docs/billing.md)", () => {
  test("limit is 1..100 and defaults to 20, as asked of the provider", async () => {
    const stripe = fakeStripe();
    const provided = await startServer({ env: { PLANS: JSON.stringify(TEST_PLANS), STRIPE_SECRET_KEY: "sk_test_fake", STRIPE_API_URL: stripe.url } });
    try {
      const org = await newOrg(provided);
      const { customerId } = (await org.admin.get("/api/billing/portal")).body;
      for (const limit of ["0", "101", "1.5"]) {
        const res = await org.admin.get(`/api/billing/invoices?limit=${limit}`);
        expect(res.status).toBe(400);
        expect(res.body.error.details[0].path).toBe("limit");
      }
      expect((await org.admin.get("/api/billing/invoices")).status).toBe(200);
      expect((await org.admin.get("/api/billing/invoices?limit=100")).status).toBe(200);
      const asked = stripe.state.requests.filter((r) => r.path.startsWith("/v1/invoices")).map((r) => r.path);
      expect(asked).toEqual([`/v1/invoices?customer=${customerId}&limit=20`, `/v1/invoices?customer=${customerId}&limit=100`]);
    } finally {
      await provided.stop();
      stripe.stop();
    }
  });
});
