import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { deliver, stripeEvent, subscriptionObject, TEST_PLANS, WEBHOOK_SECRET } from "../support/billing.ts";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";
import { type Receiver, startReceiver } from "../support/webhook-receiver.ts";

/**
 * Webhooks end to end: a real receiver in the test, every event type delivered and
 * verified with the `standardwebhooks` package as an integrator would, retries on 500 and on
 * timeouts, an endpoint disabled after a delivery fails every attempt, redelivery and rotation.
 * The addresses that are refused: webhooks-refused.test.ts.
 */

const FAST = {
  PLANS: JSON.stringify(TEST_PLANS),
  STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
  WORKER_BACKOFF_MS: "50",
  WEBHOOK_BACKOFF_MS: "100",
  WEBHOOK_ATTEMPTS: "3",
  WEBHOOK_TIMEOUT_MS: "1000",
};

let server: TestServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  server = await startServer({ env: FAST });
});
afterAll(async () => {
  for (const r of receivers) r.stop();
  await server.stop();
});

function receiver(): Receiver {
  const r = startReceiver();
  receivers.push(r);
  return r;
}

async function endpointFor(org: TestOrg, r: Receiver, body: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
  const res = await org.admin.post("/api/webhooks", { url: r.url, ...body });
  expect(res.status).toBe(201);
  expect(res.body.secret).toMatch(/^whsec_/);
  r.secret = res.body.secret;
  return res.body;
}

const waitFor = (r: Receiver, type: string, count = 1, timeoutMs = 20_000) =>
  eventually(async () => (r.ofType(type).length >= count ? r.ofType(type) : undefined), { what: `${count} ${type} event(s)`, timeoutMs });

async function deliveries(org: TestOrg, endpointId: string) {
  const res = await org.admin.get(`/api/webhooks/${endpointId}/deliveries?limit=200`);
  expect(res.status).toBe(200);
  return res.body.data as { id: string; eventId: string; eventType: string; status: string; attempts: { attempt: number; statusCode: number | null; error: string | null; succeeded: boolean; latencyMs: number }[] }[];
}

describe("every event type reaches a real receiver, signed per Standard Webhooks", () => {
  let org: TestOrg;
  let rx: Receiver;
  let endpoint: { id: string; secret: string };

  beforeAll(async () => {
    org = await newOrg(server, "Hooked");
    rx = receiver();
    endpoint = await endpointFor(org, rx);
  });

  test("objects, labels, derivatives, sets, the trash", async () => {
    const bucket = await newBucket(org, "events");
    const created = (await waitFor(rx, "bucket.created"))[0]!;
    expect(created.payload.data).toEqual({ bucketId: bucket.id, name: bucket.name });

    const image = await upload(org.admin, bucket.id, "pics/cat.png", await png(64, 48), { contentType: "image/png" });
    const [mediaCreated] = (await waitFor(rx, "media.created")).filter((r) => r.payload.data.objectId === image.id);
    expect(mediaCreated!.payload.data).toEqual({ objectId: image.id, bucketId: bucket.id, key: "pics/cat.png", kind: "image", size: image.size });
    const [ready] = (await waitFor(rx, "derivative.ready")).filter((r) => r.payload.data.objectId === image.id);
    expect(ready!.payload.data).toMatchObject({ objectId: image.id, bucketId: bucket.id, variants: expect.arrayContaining(["thumbnail"]) });

    const broken = await upload(org.admin, bucket.id, "pics/broken.png", "this is not a picture", { contentType: "image/png" });
    const [failed] = (await waitFor(rx, "derivative.failed")).filter((r) => r.payload.data.objectId === broken.id);
    expect(failed!.payload.data).toMatchObject({ objectId: broken.id, state: "failed", reason: expect.any(String) });

    // New bytes at the same key: the same object, updated.
    await upload(org.admin, bucket.id, "pics/broken.png", "still not a picture, but longer", { contentType: "image/png" });
    await org.admin.put(`/api/media/${image.id}/metadata`, { metadata: { caption: "a cat" } });
    const tag = (await org.admin.post("/api/tags", { name: "Cats" })).body;
    await org.admin.put(`/api/objects/${image.id}/tags`, { tagIds: [tag.id] });
    const category = (await org.admin.post("/api/categories", { name: "Animals" })).body;
    await org.admin.put(`/api/objects/${image.id}/categories`, { categoryIds: [category.id] });
    expect((await org.admin.delete(`/api/tags/${tag.id}`)).status).toBe(200);
    // In the order they happened (the event's own timestamp): deliveries run concurrently, so
    // they may arrive in another order, and docs/events.md promises none.
    const updates = (await waitFor(rx, "media.updated", 5)).toSorted((a, b) => Date.parse(a.payload.timestamp) - Date.parse(b.payload.timestamp));
    const changes = updates.map((u) => `${u.payload.data.objectId === image.id ? "image" : "broken"}:${u.payload.data.changes.join("+")}`);
    expect(changes).toEqual(["broken:content", "image:metadata", "image:tags", "image:categories", "image:tags"]);

    const set = (await org.admin.post("/api/sets", { name: "cat set", baseObjectId: image.id })).body;
    await org.admin.post(`/api/sets/${set.id}/items`, { aspectRatio: "1:1", width: 32, height: 32, role: "square" });
    expect((await org.admin.post(`/api/sets/${set.id}/generate`)).status).toBe(202);
    const [generated] = await waitFor(rx, "set.generated");
    expect(generated!.payload.data).toMatchObject({ setId: set.id, baseObjectId: image.id });
    expect(generated!.payload.data.objectIds).toHaveLength(1);

    expect((await org.admin.delete(`/api/media/${image.id}`)).status).toBe(200);
    const [deleted] = await waitFor(rx, "media.deleted");
    expect(deleted!.payload.data).toMatchObject({ objectId: image.id, bucketId: bucket.id, key: "pics/cat.png", restorableUntil: expect.any(String) });
    const restoring = await org.admin.post(`/api/trash/${image.id}/restore`);
    expect({ status: restoring.status, body: restoring.status === 200 ? null : restoring.body }).toEqual({ status: 200, body: null });
    const [restored] = await waitFor(rx, "media.restored");
    expect(restored!.payload.data).toEqual({ objectId: image.id, bucketId: bucket.id, key: "pics/cat.png" });
    expect((await org.admin.delete(`/api/media/${broken.id}`)).status).toBe(200);
    expect((await org.admin.delete(`/api/trash/${broken.id}`)).status).toBe(200);
    const [purged] = await waitFor(rx, "media.purged");
    expect(purged!.payload.data).toEqual({ objectId: broken.id, bucketId: bucket.id, key: "pics/broken.png" });

    const empty = await newBucket(org, "gone");
    expect((await org.admin.delete(`/api/buckets/${empty.id}`)).status).toBe(200);
    const [bucketDeleted] = await waitFor(rx, "bucket.deleted");
    expect(bucketDeleted!.payload.data).toEqual({ bucketId: empty.id, name: empty.name });
  }, 3 * WAIT_CEILING_MS);

  test("API keys: created, rotated, deleted, never with the secret", async () => {
    const key = await org.keyClient(["read"]);
    await org.admin.put(`/api/api-keys/${key.keyId}/rotate`);
    await org.admin.delete(`/api/api-keys/${key.keyId}`);
    for (const type of ["api_key.created", "api_key.rotated", "api_key.deleted"]) {
      const got = (await waitFor(rx, type)).filter((r) => r.payload.data.apiKeyId === key.keyId);
      expect({ type, data: got[0]?.payload.data }).toEqual({ type, data: { apiKeyId: key.keyId, name: expect.any(String), bucketId: null } });
      expect(got[0]!.body).not.toContain(key.secret);
    }
  });

  test("usage thresholds at 80% and 100%, capacity and plan changes", async () => {
    const other = await newOrg(server, "Thresholds");
    const r = receiver();
    await endpointFor(other, r);
    const bucket = await newBucket(other, "fill");
    // The test free tier allocates 10,000 bytes.
    await upload(other.admin, bucket.id, "a.bin", "x".repeat(7_000));
    await upload(other.admin, bucket.id, "b.bin", "x".repeat(1_000));
    const [at80] = await waitFor(r, "usage.threshold");
    expect(at80!.payload.data).toEqual({ thresholdPct: 80, usedStorage: 8_000, allocatedStorage: 10_000 });
    await upload(other.admin, bucket.id, "c.bin", "x".repeat(2_000));
    const crossings = await waitFor(r, "usage.threshold", 2);
    expect(crossings.map((c) => c.payload.data.thresholdPct)).toEqual([80, 100]);

    expect((await other.admin.post("/api/billing/capacity/add", { gb: 1 })).status).toBe(200);
    const [capacity] = await waitFor(r, "billing.capacity_added");
    expect(capacity!.payload.data).toMatchObject({ gb: 1, automatic: false, chargeId: expect.any(String) });

    const event = stripeEvent("customer.subscription.created", subscriptionObject({ customer: `cus_${other.orgId.slice(0, 8)}`, orgId: other.orgId, price: "price_pro_monthly" }));
    expect((await deliver(server.url, event)).status).toBe(200);
    const [upgraded] = await waitFor(r, "billing.plan_changed");
    expect(upgraded!.payload.data).toMatchObject({ from: "free", to: "pro", source: "provider" });
    expect((await other.admin.post("/api/billing/downgrade", { tierKey: "free" })).status).toBe(200);
    const changes = await waitFor(r, "billing.plan_changed", 2);
    expect(changes[1]!.payload.data).toMatchObject({ from: "pro", to: "free", source: "api" });
    // Only upward crossings are announced: nothing new after the allocation grew.
    expect(r.ofType("usage.threshold")).toHaveLength(2);
  }, 3 * WAIT_CEILING_MS);

  test("the test event, and what every delivery carries", async () => {
    const sent = await org.admin.post(`/api/webhooks/${endpoint.id}/test`);
    expect(sent.status).toBe(202);
    const [got] = (await waitFor(rx, "webhook.test")).filter((r) => r.id === sent.body.eventId);
    expect(got!.payload.data).toEqual({ endpointId: endpoint.id, message: expect.any(String) });

    // Every delivery so far verified with the package, as a receiver checks it.
    expect(rx.received.length).toBeGreaterThan(15);
    expect(rx.received.filter((r) => r.verifyError !== null).map((r) => r.verifyError)).toEqual([]);
    for (const r of rx.received) {
      expect(r.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(Math.abs(Number(r.timestamp) - Date.now() / 1000)).toBeLessThan(120);
      expect(Object.keys(r.payload)).toEqual(["type", "timestamp", "data"]);
      expect(JSON.stringify(r.payload.data).length).toBeLessThan(600);
    }
    // A tampered body or another secret fails verification.
    const last = rx.received.at(-1)!;
    const headers = { "webhook-id": last.id, "webhook-timestamp": last.timestamp, "webhook-signature": last.signature };
    expect(() => new Webhook(endpoint.secret).verify(last.body.replace("test", "tost"), headers)).toThrow();
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`).verify(last.body, headers)).toThrow();

    // The receiver has it before the worker records the outcome: the list says so when it is
    // recorded, and every answer on the way agrees with itself (an attempt and the delivery's
    // status are committed together; the list reads them together).
    const seen: string[] = [];
    const test = await eventually(
      async () => {
        const d = (await deliveries(org, endpoint.id)).find((x) => x.id === sent.body.deliveryId)!;
        seen.push(`${d.status}, ${d.attempts.length} attempt(s)`);
        return d.status === "succeeded" ? d : undefined;
      },
      { what: "the test delivery recorded as succeeded", intervalMs: 5 },
    );
    expect(seen.filter((s) => s !== "pending, 0 attempt(s)" && s !== "succeeded, 1 attempt(s)")).toEqual([]);
    expect(test).toMatchObject({ eventId: sent.body.eventId, eventType: "webhook.test", status: "succeeded" });
    expect(test.attempts).toEqual([expect.objectContaining({ attempt: 1, statusCode: 204, succeeded: true, error: null })]);
  });

  test("an endpoint gets only the types it asked for; other organizations' events never", async () => {
    const r = receiver();
    const only = await endpointFor(org, r, { eventTypes: ["bucket.deleted"] });
    const stranger = await newOrg(server, "Stranger");
    const theirs = await newBucket(stranger, "theirs");
    await stranger.admin.delete(`/api/buckets/${theirs.id}`);
    const mine = await newBucket(org, "mine");
    await org.admin.delete(`/api/buckets/${mine.id}`);
    const got = await waitFor(r, "bucket.deleted");
    expect(got.map((g) => g.payload.data.bucketId)).toEqual([mine.id]);
    await Bun.sleep(300);
    expect(r.received.map((g) => g.payload.type)).toEqual(["bucket.deleted"]);
    await org.admin.delete(`/api/webhooks/${only.id}`);
  });

  test("after a rotation both secrets verify for a day", async () => {
    const r = receiver();
    const ep = await endpointFor(org, r, { eventTypes: ["bucket.created"] });
    const rotated = await org.admin.put(`/api/webhooks/${ep.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(ep.secret);
    expect(JSON.stringify((await org.admin.get(`/api/webhooks/${ep.id}`)).body)).not.toContain("whsec_");
    await newBucket(org, "rotated");
    const [got] = await waitFor(r, "bucket.created");
    const headers = { "webhook-id": got!.id, "webhook-timestamp": got!.timestamp, "webhook-signature": got!.signature };
    expect(got!.signature.split(" ")).toHaveLength(2);
    expect(() => new Webhook(rotated.body.secret).verify(got!.body, headers)).not.toThrow();
    expect(() => new Webhook(ep.secret).verify(got!.body, headers)).not.toThrow();
    await org.admin.delete(`/api/webhooks/${ep.id}`);
  });
});

describe("delivery: retries, timeouts, giving up, redelivery", () => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await newOrg(server, "Flaky receivers");
  });

  test("a 500 is retried until the receiver takes it; each attempt is listed", async () => {
    const r = receiver();
    r.respond = (_, n) => (n <= 2 ? 500 : 200);
    const ep = await endpointFor(org, r, { eventTypes: ["bucket.created"] });
    await newBucket(org, "retry");
    const got = await waitFor(r, "bucket.created", 3);
    expect(new Set(got.map((g) => g.id)).size).toBe(1);
    expect(got.every((g) => g.verifyError === null)).toBe(true);
    // Each attempt is signed at its own time.
    const [d] = await eventually(async () => {
      const list = await deliveries(org, ep.id);
      return list[0]?.status === "succeeded" ? list : undefined;
    });
    expect(d!.attempts.map((a) => [a.attempt, a.statusCode, a.succeeded])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 200, true],
    ]);
    expect(d!.attempts[0]!.error).toContain("500");
    expect((await org.admin.get(`/api/webhooks/${ep.id}`)).body.enabled).toBe(true);
    await org.admin.delete(`/api/webhooks/${ep.id}`);
  });

  test("no answer within the deadline is retried like a failure", async () => {
    const r = receiver();
    r.respond = (_, n) => (n === 1 ? { delayMs: 2500, status: 200 } : 200);
    const ep = await endpointFor(org, r, { eventTypes: ["bucket.created"] });
    await newBucket(org, "slow");
    const [d] = await eventually(async () => {
      const list = await deliveries(org, ep.id);
      return list[0]?.status === "succeeded" ? list : undefined;
    });
    expect(d!.attempts).toHaveLength(2);
    expect(d!.attempts[0]).toMatchObject({ succeeded: false, statusCode: null, error: expect.stringContaining("No complete answer within 1000 ms") });
    expect(d!.attempts[0]!.latencyMs).toBeGreaterThanOrEqual(900);
    expect(d!.attempts[1]).toMatchObject({ succeeded: true, statusCode: 200 });
    await org.admin.delete(`/api/webhooks/${ep.id}`);
  });

  test("a delivery that fails every attempt disables the endpoint, visibly; redelivery after enabling sends the same event", async () => {
    const r = receiver();
    r.respond = () => 503;
    const ep = await endpointFor(org, r, { eventTypes: ["bucket.created"] });
    await newBucket(org, "doomed");
    const endpoint = await eventually(async () => {
      const got = (await org.admin.get(`/api/webhooks/${ep.id}`)).body;
      return got.enabled ? undefined : got;
    }, { what: "the endpoint to be disabled", timeoutMs: WAIT_CEILING_MS });
    expect(endpoint).toMatchObject({ enabled: false, disabledReason: "failing", disabledAt: expect.any(String) });
    const [failed] = await deliveries(org, ep.id);
    expect(failed).toMatchObject({ status: "failed", nextAttemptAt: null });
    expect(failed!.attempts.map((a) => a.statusCode)).toEqual([503, 503, 503]);
    const audit = await org.admin.get(`/api/audit?action=webhook_endpoint_disabled&targetId=${ep.id}`);
    expect(audit.body.data).toEqual([expect.objectContaining({ actor: { type: "system", apiKeyId: null, serviceCredentialId: null, userId: null }, targets: { id: ep.id } })]);

    // Disabled: events are not sent, and redelivery is refused until it is enabled again.
    await newBucket(org, "unsent");
    expect((await org.admin.post(`/api/webhooks/${ep.id}/deliveries/${failed!.id}/redeliver`)).status).toBe(409);
    expect((await org.admin.post(`/api/webhooks/${ep.id}/enable`)).body).toMatchObject({ enabled: true, disabledReason: null });
    r.respond = () => 200;
    const again = await org.admin.post(`/api/webhooks/${ep.id}/deliveries/${failed!.id}/redeliver`);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ eventId: failed!.eventId, status: "pending" });
    await eventually(async () => (r.received.at(-1)?.id === failed!.eventId && r.received.length === 4 ? true : undefined));
    const after = await eventually(async () => {
      const list = await deliveries(org, ep.id);
      return list.find((d) => d.id === again.body.id)?.status === "succeeded" ? list : undefined;
    });
    expect(after).toHaveLength(2);
    expect(r.received.length).toBe(4);
  }, 3 * WAIT_CEILING_MS);

  test("a manually disabled endpoint gets nothing, and says so", async () => {
    const r = receiver();
    const ep = await endpointFor(org, r, { eventTypes: ["bucket.created"] });
    expect((await org.admin.post(`/api/webhooks/${ep.id}/disable`)).body).toMatchObject({ enabled: false, disabledReason: "manual" });
    expect((await org.admin.post(`/api/webhooks/${ep.id}/test`)).status).toBe(409);
    await newBucket(org, "quiet");
    await Bun.sleep(500);
    expect(r.received).toEqual([]);
    expect(await deliveries(org, ep.id)).toEqual([]);
  });
});
