/**
 * The 2026 attack run, part A: each finding reproduced as the attacker ran it, and what the
 * service must answer now. SECURITY.md, "Findings of the 2026 attack run (part A)".
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { liveUsage } from "../../domain/usage/counters.ts";
import { mediaObjects, orgUsage } from "../../db/schema/index.ts";
import { ManualClock } from "../../domain/core/clock.ts";
import { objectPath } from "../../domain/media/storage-keys.ts";
import * as uploads from "../../domain/media/uploads.ts";
import { generateSetVariants } from "../../worker/set-variants.ts";
import { deliver, invoiceObject, signatureFor, stripeEvent, TEST_PLANS, WEBHOOK_SECRET } from "../support/billing.ts";
import { png } from "../support/media-files.ts";
import { insertObject, newBucket } from "../support/objects.ts";
import { newOrg, signJwt, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";
import { toolError } from "../support/mcp-results.ts";

let server: TestServer;
const clock = new ManualClock();
const MiB = 1024 * 1024;

beforeAll(async () => {
  server = await startServer({ clock, ownDatabase: true, env: { PLANS: JSON.stringify(TEST_PLANS), STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET } });
}, 60_000);
afterAll(() => server.stop());

const deps = () => server.services.deps;
const usage = async (orgId: string) => (await liveUsage(deps().db, orgId))!;
const stored = (bucketId: string, key: string) => deps().storage.head(objectPath(bucketId, key));
const rowsAt = (bucketId: string, key: string) => deps().db.select().from(mediaObjects).where(eq(mediaObjects.key, key)).then((r) => r.filter((o) => o.bucketId === bucketId));

/** An organization on a 1 MiB allocation, with a bucket. */
async function smallOrg(allocated = MiB) {
  const org = await newOrg(server);
  const bucket = await newBucket(org);
  await deps().db.update(orgUsage).set({ allocatedStorage: allocated }).where(eq(orgUsage.orgId, org.orgId));
  return { org, bucket };
}

const put = (url: string, headers: Record<string, string>, body: Uint8Array<ArrayBuffer> | string) => fetch(url, { method: "PUT", headers, body });

describe("finding 1: uploads are bounded by what was reserved", () => {
  test("a declared size is signed as the PUT's maximum: size 0 and a 2 MiB PUT is refused by storage", async () => {
    const { org, bucket } = await smallOrg();
    const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "zero.bin", size: 0 });
    expect(p.status).toBe(200);
    expect(new URL(p.body.url).searchParams.get("max-content-length")).toBe("0");
    const res = await put(p.body.url, p.body.headers, bytesOf(2 * MiB));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("<Code>EntityTooLarge</Code>");
    expect(await stored(bucket.id, "zero.bin")).toBeNull();
    expect((await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "zero.bin" })).status).toBe(404);
    expect((await usage(org.orgId)).usedStorage).toBe(0);
  });

  test("20 presigns of size 0 with 2 MiB each cannot use 40 MiB of a 1 MiB allocation", async () => {
    const { org, bucket } = await smallOrg();
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: `many/${i}`, size: 0 });
        await put(p.body.url, p.body.headers, bytesOf(2 * MiB));
        await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: `many/${i}` });
      }),
    );
    expect((await usage(org.orgId)).usedStorage).toBeLessThanOrEqual(MiB);
  });

  test("without a size nothing is promised: confirm measures, refuses past the quota with 403 and deletes the bytes", async () => {
    const { org, bucket } = await smallOrg();
    const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "big.bin" });
    expect(p.body.headers["Content-Length"]).toBeUndefined();
    expect((await put(p.body.url, p.body.headers, bytesOf(2 * MiB))).status).toBe(200);
    const before = await usage(org.orgId);
    const confirmed = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "big.bin" });
    expect(confirmed.status).toBe(403);
    expect(confirmed.body.error.code).toBe("quota_exceeded");
    expect(await stored(bucket.id, "big.bin")).toBeNull();
    expect(await rowsAt(bucket.id, "big.bin")).toEqual([]);
    const after = await usage(org.orgId);
    expect(after.usedStorage).toBe(before.usedStorage);
    expect(after.reservedStorage).toBe(0);
    // what fits is recorded as before
    const small = await upload(org.admin, bucket.id, "small.bin", bytesOf(1000));
    expect(small.size).toBe(1000);
  });

  test("an upload URL is dead after confirm: a second PUT of other bytes is refused, the object keeps its size", async () => {
    const { org, bucket } = await smallOrg(64 * MiB);
    const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "pixel.png", contentType: "image/png" });
    expect((await put(p.body.url, p.body.headers, bytesOf(69))).status).toBe(200);
    const obj = (await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "pixel.png" })).body;
    expect(obj.size).toBe(69);
    const again = await put(p.body.url, p.body.headers, bytesOf(3 * MiB));
    expect(again.status).toBe(412);
    expect((await stored(bucket.id, "pixel.png"))?.size).toBe(69);
    const dl = await org.admin.post("/api/presign/download", { objectId: obj.id });
    expect((await (await fetch(dl.body.url)).arrayBuffer()).byteLength).toBe(69);
    // with a declared size too: the same length, other bytes, refused
    const q = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "sized.bin", size: 100 });
    expect((await put(q.body.url, q.body.headers, bytesOf(100))).status).toBe(200);
    expect((await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "sized.bin" })).status).toBe(200);
    expect((await put(q.body.url, q.body.headers, bytesOf(100, 7))).status).toBe(412);
  });

  test("replacing an object, and uploading over a deleted one, still work", async () => {
    const { org, bucket } = await smallOrg(64 * MiB);
    const first = await upload(org.admin, bucket.id, "same.bin", bytesOf(500));
    const second = await upload(org.admin, bucket.id, "same.bin", bytesOf(700, 2));
    expect(second).toMatchObject({ id: first.id, size: 700 });
    expect((await usage(org.orgId)).usedStorage).toBe(700);
    expect((await org.admin.delete(`/api/media/${first.id}`)).status).toBe(200);
    const third = await upload(org.admin, bucket.id, "same.bin", bytesOf(300, 3), { size: 300 });
    expect(third.size).toBe(300);
    // bytes PUT but never confirmed do not lock the key: the next presign sees them
    const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "left.bin" });
    expect((await put(p.body.url, p.body.headers, bytesOf(10))).status).toBe(200);
    const retried = await upload(org.admin, bucket.id, "left.bin", bytesOf(20));
    expect(retried.size).toBe(20);
  });

  test("the storage node names the headers a PUT must carry when one is missing", async () => {
    const { org, bucket } = await smallOrg();
    const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "hdr.bin", size: 3 });
    const res = await fetch(p.body.url, { method: "PUT", body: "abc" });
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(text).toContain("content-type");
    expect(text).toContain("if-none-match");
  });

  test("bytes PUT but never confirmed are deleted by the sweeper", async () => {
    const { org, bucket } = await smallOrg();
    const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "orphan.bin" });
    expect((await put(p.body.url, p.body.headers, bytesOf(5000))).status).toBe(200);
    const m = await org.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key: "orphan-mp.bin" });
    const part = await org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key: "orphan-mp.bin", uploadId: m.body.uploadId, partNumber: 1 });
    expect((await put(part.body.url, part.body.headers, bytesOf(4000))).status).toBe(200);
    expect((await org.admin.post("/api/presign/complete-upload", { bucketId: bucket.id, key: "orphan-mp.bin", uploadId: m.body.uploadId })).status).toBe(200);
    // Declared: the URL without a size above already counts all this organization may leave unconfirmed.
    const kept = await upload(org.admin, bucket.id, "kept.bin", bytesOf(10), { size: 10 });
    expect(await stored(bucket.id, "orphan.bin")).not.toBeNull();
    clock.advance(25 * 3600_000);
    try {
      await server.services.maintenance.runOnce();
    } finally {
      clock.advance(-25 * 3600_000);
    }
    expect(await stored(bucket.id, "orphan.bin")).toBeNull();
    expect(await stored(bucket.id, "orphan-mp.bin")).toBeNull();
    expect((await stored(bucket.id, "kept.bin"))?.size).toBe(kept.size);
  });

  test("multipart: a total above the declared size is refused at complete-upload; without a size, confirm measures", async () => {
    const { org, bucket } = await smallOrg();
    const m = await org.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key: "mp.bin", size: 1000 });
    const part = await org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key: "mp.bin", uploadId: m.body.uploadId, partNumber: 1 });
    expect((await put(part.body.url, part.body.headers, bytesOf(2 * MiB))).status).toBe(200);
    const done = await org.admin.post("/api/presign/complete-upload", { bucketId: bucket.id, key: "mp.bin", uploadId: m.body.uploadId });
    expect(done.status).toBe(403);
    expect(done.body.error.code).toBe("quota_exceeded");
    expect(await stored(bucket.id, "mp.bin")).toBeNull();

    const n = await org.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key: "mp2.bin", size: 0 });
    const part2 = await org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key: "mp2.bin", uploadId: n.body.uploadId, partNumber: 1 });
    expect((await put(part2.body.url, part2.body.headers, bytesOf(6 * MiB))).status).toBe(200);
    const done2 = await org.admin.post("/api/presign/complete-upload", { bucketId: bucket.id, key: "mp2.bin", uploadId: n.body.uploadId });
    expect(done2.status).toBe(403);
    const confirmed = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "mp2.bin" });
    expect(confirmed.status).toBe(404);
    expect(await stored(bucket.id, "mp2.bin")).toBeNull();
    expect((await usage(org.orgId)).usedStorage).toBe(0);

    const o = await org.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key: "mp3.bin" });
    const part3 = await org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key: "mp3.bin", uploadId: o.body.uploadId, partNumber: 1 });
    expect((await put(part3.body.url, part3.body.headers, bytesOf(2 * MiB))).status).toBe(200);
    const c3 = await org.admin.post("/api/presign/complete-upload", { bucketId: bucket.id, key: "mp3.bin", uploadId: o.body.uploadId });
    expect(c3.status).toBe(403);
    expect(c3.body.error.code).toBe("quota_exceeded");
    expect(await stored(bucket.id, "mp3.bin")).toBeNull();
    const after = await usage(org.orgId);
    expect(after.usedStorage).toBe(0);
    expect(after.reservedStorage).toBe(0);
    // without a size, parts that fit are reserved at completion and recorded at confirm
    const f = await org.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key: "fits.bin" });
    const part4 = await org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key: "fits.bin", uploadId: f.body.uploadId, partNumber: 1 });
    expect((await put(part4.body.url, part4.body.headers, bytesOf(5000))).status).toBe(200);
    expect((await org.admin.post("/api/presign/complete-upload", { bucketId: bucket.id, key: "fits.bin", uploadId: f.body.uploadId })).status).toBe(200);
    expect((await usage(org.orgId)).reservedStorage).toBe(5000);
    expect((await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "fits.bin" })).body.size).toBe(5000);
    expect(await usage(org.orgId)).toMatchObject({ usedStorage: 5000, reservedStorage: 0 });
  });

  test("set renditions reserve quota: a rendition that does not fit is not stored", async () => {
    const { org, bucket } = await smallOrg(64 * MiB);
    const base = await insertObject(server, org, bucket.id, { key: "base.png", bytes: await png(1200, 900), contentType: "image/png" });
    const set = (await org.admin.post("/api/sets", { name: "r", baseObjectId: base.id })).body;
    expect((await org.admin.post(`/api/sets/${set.id}/items`, { aspectRatio: "4:3", width: 1200, height: 900, role: "big" })).status).toBe(201);
    const u = await usage(org.orgId);
    await deps().db.update(orgUsage).set({ allocatedStorage: u.usedStorage + 100 }).where(eq(orgUsage.orgId, org.orgId));
    await expect(generateSetVariants(deps(), org.orgId, set.id, { attempt: 1, attempts: 3 })).rejects.toThrow(/quota|allocat/i);
    const after = await usage(org.orgId);
    expect(after.usedStorage).toBe(u.usedStorage);
    expect(after.usedStorage + after.reservedStorage).toBeLessThanOrEqual(after.allocatedStorage);
  });

  test("reserveUploadQuota: the domain function other ways of storing bytes (imports) reserve with", async () => {
    const { org, bucket } = await smallOrg(1000);
    await uploads.reserveUploadQuota(deps(), org.orgId, { bucketId: bucket.id, key: "import.bin", size: 600 });
    expect((await usage(org.orgId)).reservedStorage).toBe(600);
    await expect(uploads.reserveUploadQuota(deps(), org.orgId, { bucketId: bucket.id, key: "import2.bin", size: 600 })).rejects.toMatchObject({ code: "quota_exceeded" });
  });
});

describe("finding 4: input that reached a 5xx is a 4xx", () => {
  let org: TestOrg;
  let bucket: { id: string };
  beforeAll(async () => {
    org = await newOrg(server);
    bucket = await newBucket(org);
  });

  test("lone surrogates in metadata values and keys are 400, over REST and MCP", async () => {
    const object = await insertObject(server, org, bucket.id);
    for (const metadata of ['{"k":"\\ud800"}', '{"\\udc00x":"v"}', '{"k":{"n":"a\\udfffb"}}']) {
      const res = await org.admin.call("PUT", `/api/media/${object.id}/metadata`, `{"metadata":${metadata}}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
    const mcp = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.adminKey.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"media_update_metadata","arguments":{"id":"${object.id}","metadata":{"k":"\\ud800"}}}}`,
    });
    const body = await mcp.json();
    expect(body.result.isError).toBe(true);
    expect(toolError(body.result.content).code).toBe("validation_error");
  });

  test("dates out of the database's range are 400", async () => {
    for (const q of ["dateFrom=0000-01-01", "dateTo=0000-12-31", "dateFrom=0000-01-01T00:00:00Z"]) {
      const res = await org.admin.get(`/api/search?q=x&${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
    // The audit log's bounds are timestamps of their own (the fuzzer found year 0 there).
    for (const q of ["from=0000-12-31T23%3A59%3A59Z", "to=0000-12-31T23%3A59%3A59Z"]) {
      const res = await org.admin.get(`/api/audit?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
  });

  test("complete-upload repeated without parts is 409, not 500", async () => {
    const m = await org.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key: "twice.bin", size: 10 });
    const part = await org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key: "twice.bin", uploadId: m.body.uploadId, partNumber: 1 });
    expect((await put(part.body.url, part.body.headers, "0123456789")).status).toBe(200);
    const input = { bucketId: bucket.id, key: "twice.bin", uploadId: m.body.uploadId };
    expect((await org.admin.post("/api/presign/complete-upload", input)).status).toBe(200);
    const again = await org.admin.post("/api/presign/complete-upload", input);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("conflict");
  });

  test("a valid JWT with NUL in email or org_name is 401, not 500", async () => {
    for (const claims of [{ email: "a\u0000@example.test" }, { org_name: "Org\u0000" }]) {
      const jwt = await signJwt({ sub: crypto.randomUUID(), org_id: crypto.randomUUID(), ...claims });
      const res = await server.api.withToken(jwt).get("/api/me");
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("unauthorized");
    }
  });

  test("signed webhook events with a bad created, a huge amount or NUL in the id are 400", async () => {
    const customer = "cus_attack";
    const ok = stripeEvent("invoice.paid", invoiceObject({ customer, amountPaid: 100 }));
    const bodies = [
      JSON.stringify({ ...ok, created: "yesterday" }),
      JSON.stringify({ ...ok, created: 1e20 }),
      JSON.stringify({ ...ok, created: -1e20 }),
      JSON.stringify({ ...ok, id: "evt_\u0000x" }),
      JSON.stringify(ok).replace('"amount_paid":100', '"amount_paid":"1e400"'),
      JSON.stringify(ok).replace('"amount_paid":100', '"amount_paid":1e400'),
    ];
    for (const body of bodies) {
      const res = await deliver(server.url, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("bad_request");
    }
  });

  test("a 64 KiB query string is 431 with the error envelope", async () => {
    const res = await fetch(`${server.url}/api/buckets?x=${"a".repeat(64 * 1024)}`, { headers: { authorization: `Bearer ${org.adminKey.secret}` } });
    expect(res.status).toBe(431);
    const body = await res.json();
    expect(body.error.code).toBe("request_header_fields_too_large");
  });
});

describe("finding 5: a key cannot create or rotate a key that outlives it", () => {
  test("a 1-day admin key asking for 365 days gets a key capped at its own expiry, and the note says so", async () => {
    const org = await newOrg(server);
    const short = await org.keyClient(["admin"], { expiresInDays: 1 });
    const shortExpiry = Date.parse((await short.get("/api/me")).body.credential.expiresAt ?? "");
    const long = await short.post("/api/api-keys", { name: "long", scopes: ["admin"], expiresInDays: 365 });
    // Every value the API allows is accepted; only the expiry is bounded.
    expect(long.status).toBe(201);
    expect(Date.parse(long.body.expiresAt)).toBeLessThanOrEqual(clock.now().getTime() + 86_400_000);
    if (Number.isFinite(shortExpiry)) expect(Date.parse(long.body.expiresAt)).toBe(shortExpiry);
    expect(long.body.note).toMatch(/capped at/);
    const same = await short.post("/api/api-keys", { name: "same", scopes: ["read"], expiresInDays: 1 });
    expect(same.status).toBe(201);
    expect(same.body.note).not.toMatch(/capped/);
    const byDefault = await short.post("/api/api-keys", { name: "default", scopes: ["read"] });
    expect(byDefault.status).toBe(201);
    expect(new Date(byDefault.body.expiresAt).getTime()).toBeLessThanOrEqual(clock.now().getTime() + 86_400_000);
    // Service credentials follow the same rule.
    const cred = await short.post("/api/service-credentials", { name: "svc", scopes: ["read"], expiresInDays: 365 });
    expect(cred.status).toBe(201);
    expect(Date.parse(cred.body.expiresAt)).toBeLessThanOrEqual(clock.now().getTime() + 86_400_000);
    expect(cred.body.note).toMatch(/capped at/);
    // A dashboard user (JWT) is not bound by its own short life.
    const year = await org.owner.post("/api/api-keys", { name: "year", scopes: ["read"], expiresInDays: 365 });
    expect(year.status).toBe(201);
    expect(Date.parse(year.body.expiresAt)).toBe(clock.now().getTime() + 365 * 86_400_000);
    expect(year.body.note).not.toMatch(/capped/);
  });

  test("a 1-day admin key rotating a 300-day key gets a secret that expires with it; the list agrees", async () => {
    const org = await newOrg(server);
    const target = (await org.owner.post("/api/api-keys", { name: "long-lived", scopes: ["read"], expiresInDays: 300 })).body;
    const short = await org.keyClient(["admin"], { expiresInDays: 1 });
    const rotated = await short.put(`/api/api-keys/${target.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(Date.parse(rotated.body.expiresAt)).toBeLessThanOrEqual(clock.now().getTime() + 86_400_000);
    expect(rotated.body.note).toMatch(/capped at/);
    const listed = (await org.owner.get("/api/api-keys?limit=200")).body.data.find((k: { id: string }) => k.id === target.id);
    expect(listed.expiresAt).toBe(rotated.body.expiresAt);
    const me = await server.api.withToken(rotated.body.secret).get("/api/me");
    expect(me.status).toBe(200);
    // A person rotating keeps the key's own expiry.
    const again = await org.owner.put(`/api/api-keys/${target.id}/rotate`);
    expect(again.body.expiresAt).toBe(rotated.body.expiresAt);
    expect(again.body.note).not.toMatch(/capped/);
  });
});

describe("finding 6: the storage origin never renders user content", () => {
  test("an HTML object is served as an attachment with nosniff and a sandbox CSP; images stay inline", async () => {
    const org = await newOrg(server);
    const bucket = await newBucket(org);
    const html = await upload(org.admin, bucket.id, "x.html", "<script>alert(1)</script>", { contentType: "text/html" });
    const stream = await org.admin.get(`/api/media/${html.id}/stream`);
    const res = await fetch(stream.headers.get("location")!);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toContain("sandbox");
    expect(res.headers.get("content-disposition")).toStartWith("attachment");
    await res.arrayBuffer();
    for (const [key, type] of [["x.svg", "image/svg+xml"], ["x.xml", "application/xml"], ["x.js", "text/javascript"]] as const) {
      const obj = await upload(org.admin, bucket.id, key, "<x/>", { contentType: type });
      const r = await fetch((await org.admin.get(`/api/media/${obj.id}/stream`)).headers.get("location")!);
      expect(r.headers.get("content-disposition")).toStartWith("attachment");
      await r.arrayBuffer();
    }
    const img = await upload(org.admin, bucket.id, "x.png", await png(4, 4), { contentType: "image/png" });
    const r = await fetch((await org.admin.get(`/api/media/${img.id}/stream`)).headers.get("location")!);
    expect(r.headers.get("content-disposition")).toBeNull();
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    await r.arrayBuffer();
  });

  test("unsigned representation headers on a PUT are neither stored nor replayed", async () => {
    const org = await newOrg(server);
    const bucket = await newBucket(org);
    const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "h.txt", contentType: "text/plain" });
    const res = await put(p.body.url, { ...p.body.headers, "Cache-Control": "public, max-age=31536000", "Content-Encoding": "gzip", "Content-Disposition": "inline" }, "hello");
    expect(res.status).toBe(200);
    const obj = (await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "h.txt" })).body;
    const r = await fetch((await org.admin.get(`/api/media/${obj.id}/stream`)).headers.get("location")!);
    expect(r.headers.get("cache-control") ?? "").not.toContain("31536000");
    expect(r.headers.get("content-encoding")).toBeNull();
    expect(await r.text()).toBe("hello");
  });
});

describe("finding 7: the payment webhook refuses signatures dated in the future", () => {
  test("a signature a year ahead is 400; a few seconds ahead is accepted", async () => {
    const event = stripeEvent("invoice.paid", invoiceObject({ customer: "cus_future", amountPaid: 1 }));
    const body = JSON.stringify(event);
    const ahead = Math.floor(Date.now() / 1000) + 365 * 86_400;
    const res = await deliver(server.url, body, { signature: await signatureFor(body, { timestamp: ahead }) });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toMatchObject({ reason: "future" });
    const soon = Math.floor(Date.now() / 1000) + 10;
    expect((await deliver(server.url, body, { signature: await signatureFor(body, { timestamp: soon }) })).status).toBe(200);
  });
});

describe("finding 9: upload tags and download URLs", () => {
  test("tags with CR, LF, TAB or other control characters are 400", async () => {
    const org = await newOrg(server);
    const bucket = await newBucket(org);
    for (const tag of ["a\rb", "a\nb", "a\tb", "a\u000bb", "a\u0085b"]) {
      const res = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "t.bin", tags: [tag] });
      expect(res.status).toBe(400);
    }
    expect((await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "t.bin", tags: ["beach day"] })).status).toBe(200);
  });

  test("a download URL dies when its object is purged", async () => {
    const org = await newOrg(server);
    const bucket = await newBucket(org);
    const obj = await upload(org.admin, bucket.id, "gone.bin", bytesOf(10));
    const dl = await org.admin.post("/api/presign/download", { objectId: obj.id });
    expect((await fetch(dl.body.url)).status).toBe(200);
    expect((await org.admin.delete(`/api/media/${obj.id}`)).status).toBe(200);
    expect((await org.admin.delete(`/api/trash/${obj.id}`)).status).toBe(200);
    await server.services.maintenance.runOnce();
    const { eventually } = await import("../support/eventually.ts");
    await eventually(async () => ((await fetch(dl.body.url)).status === 404 ? true : undefined), { what: "the purged bytes to be gone" });
  });
});
