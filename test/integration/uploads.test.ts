import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GetObjectTaggingCommand } from "@aws-sdk/client-s3";
import { eq } from "drizzle-orm";
import { liveUsage } from "../../domain/usage/counters.ts";
import { jobOutbox, orgUsage, uploadReservations } from "../../db/schema/index.ts";
import { ManualClock } from "../../domain/core/clock.ts";
import type { S3Storage } from "../../storage/s3.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { bytesOf, sha256, upload } from "../support/upload.ts";

let server: TestServer;
let org: TestOrg;
let other: TestOrg;
let bucket: { id: string; name: string };
const clock = new ManualClock();
const MiB = 1024 * 1024;

beforeAll(async () => {
  server = await startServer({ clock, ownDatabase: true });
  org = await newOrg(server);
  other = await newOrg(server);
  bucket = (await org.admin.post("/api/buckets", { name: "uploads" })).body;
});
afterAll(() => server.stop());

const db = () => server.services.deps.db;
const usage = async (orgId = org.orgId) => (await liveUsage(db(), orgId))!;
const storageClient = () => (server.services.deps.storage as S3Storage).client;

describe("single-shot upload", () => {
  test("presign -> PUT with the returned headers -> confirm records the object", async () => {
    const body = bytesOf(1234);
    const presigned = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "photos/one.png", contentType: "image/png", size: 1234 });
    expect(presigned.status).toBe(200);
    expect(presigned.body).toMatchObject({ method: "PUT", key: "photos/one.png", bucketId: bucket.id, bucket: "uploads", expiresIn: 900, headers: { "Content-Type": "image/png" } });
    expect(presigned.body.url).toStartWith("http://127.0.0.1:");
    const put = await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body });
    expect(put.status).toBe(200);
    const confirmed = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "photos/one.png" });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ key: "photos/one.png", fileName: "one.png", bucketId: bucket.id, size: 1234, contentType: "image/png", kind: "image", metadata: {} });
    // a derivative job was recorded with the object
    const jobs = await db().select().from(jobOutbox).where(eq(jobOutbox.name, "derivatives.generate"));
    expect(jobs.some((j) => (j.payload as { objectId: string }).objectId === confirmed.body.id)).toBe(true);
  });

  test("tags are signed as the x-amz-tagging header, joined with '&', and stored with the object", async () => {
    const presigned = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "tagged.jpg", tags: ["sunset", "beach day", "café"] });
    expect(presigned.body.headers).toEqual({ "Content-Type": "image/jpeg", "If-None-Match": "*", "x-amz-tagging": "sunset&beach%20day&caf%C3%A9" });
    expect(new URL(presigned.body.url).searchParams.get("X-Amz-SignedHeaders")).toBe("content-type;host;if-none-match;x-amz-tagging");
    expect(new URL(presigned.body.url).searchParams.has("x-amz-tagging")).toBe(false);
    // without the tagging header the signature does not match
    const bare = await fetch(presigned.body.url, { method: "PUT", headers: { "Content-Type": "image/jpeg", "If-None-Match": "*" }, body: "x" });
    expect(bare.status).toBe(403);
    const put = await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body: "jpeg bytes" });
    expect(put.status).toBe(200);
    const tagging = await storageClient().send(new GetObjectTaggingCommand({ Bucket: server.config.s3.bucket, Key: `${bucket.id}/tagged.jpg` }));
    expect(tagging.TagSet?.map((t) => t.Key).sort()).toEqual(["beach day", "café", "sunset"]);
    const confirmed = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "tagged.jpg" });
    expect(confirmed.status).toBe(200);
    // the labels became the object's tags, created on first use
    expect(confirmed.body.tags.map((t: { name: string }) => t.name).sort()).toEqual(["beach day", "café", "sunset"]);
    const listed = await org.admin.get("/api/tags?limit=200");
    expect(listed.body.data.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(["beach day", "café", "sunset"]));
    // a second upload with a label of the same slug reuses the tag
    const again = await upload(org.admin, bucket.id, "tagged2.jpg", "more", { tags: ["Sunset"] });
    expect(again.tags.map((t: { id: string }) => t.id)).toEqual(confirmed.body.tags.filter((t: { name: string }) => t.name === "sunset").map((t: { id: string }) => t.id));
  });

  test("the content type defaults from the extension; kind falls back to the extension", async () => {
    const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "models/ship.glb" });
    expect(p.body.headers["Content-Type"]).toBe("model/gltf-binary");
    const obj = await upload(org.admin, bucket.id, "docs/manual.pdf", "%PDF-1.4", { contentType: "application/octet-stream" });
    expect(obj.kind).toBe("pdf");
    const other = await upload(org.admin, bucket.id, "noext", "???");
    expect(other).toMatchObject({ contentType: "application/octet-stream", kind: "other" });
  });

  test("a tampered URL is refused by storage", async () => {
    const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "tamper.txt" });
    const url = new URL(p.body.url);
    const sig = url.searchParams.get("X-Amz-Signature")!;
    url.searchParams.set("X-Amz-Signature", (sig[0] === "a" ? "b" : "a") + sig.slice(1));
    expect((await fetch(url, { method: "PUT", headers: p.body.headers, body: "x" })).status).toBe(403);
    const otherKey = p.body.url.replace("tamper.txt", "tamper2.txt");
    expect((await fetch(otherKey, { method: "PUT", headers: p.body.headers, body: "x" })).status).toBe(403);
    const otherType = await fetch(p.body.url, { method: "PUT", headers: { "Content-Type": "image/png" }, body: "x" });
    expect(otherType.status).toBe(403);
  });

  test("an expired URL is refused by storage", async () => {
    clock.advance(-2 * 3600_000);
    try {
      const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "late.txt" });
      expect((await fetch(p.body.url, { method: "PUT", headers: p.body.headers, body: "x" })).status).toBe(403);
    } finally {
      clock.advance(2 * 3600_000);
    }
  });

  test("a declared size bounds the PUT (storage refuses more), the reservation stays until confirm or expiry", async () => {
    const before = await usage();
    const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "liar.bin", size: 10 });
    expect(p.body.headers["Content-Length"]).toBeUndefined();
    expect((await usage()).reservedStorage).toBe(before.reservedStorage + 10);
    expect((await fetch(p.body.url, { method: "PUT", headers: p.body.headers, body: bytesOf(5000) })).status).toBe(400);
    expect((await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "liar.bin" })).status).toBe(404);
    expect((await fetch(p.body.url, { method: "PUT", headers: p.body.headers, body: bytesOf(7) })).status).toBe(200);
    const confirmed = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "liar.bin" });
    expect(confirmed.body.size).toBe(7);
    const after = await usage();
    expect(after.reservedStorage).toBe(before.reservedStorage);
    expect(after.usedStorage).toBe(before.usedStorage + 7);
    expect(after.objectCount).toBe(before.objectCount + 1);
  });

  test("confirm is idempotent; overwriting adjusts usage by the difference", async () => {
    const first = await upload(org.admin, bucket.id, "over.bin", bytesOf(3000));
    const base = await usage();
    const again = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "over.bin" });
    expect(again.body).toEqual(first);
    expect(await usage()).toEqual(base);
    const jobsBefore = (await db().select().from(jobOutbox)).length;
    const replaced = await upload(org.admin, bucket.id, "over.bin", bytesOf(1000, 2));
    expect(replaced.id).toBe(first.id);
    expect(replaced.size).toBe(1000);
    const after = await usage();
    expect(after.usedStorage).toBe(base.usedStorage - 2000);
    expect(after.objectCount).toBe(base.objectCount);
    expect((await db().select().from(jobOutbox)).length).toBe(jobsBefore + 1);
  });

  test("confirming a key that was never uploaded is 404 and changes nothing", async () => {
    const base = await usage();
    const res = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "never/uploaded.png" });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toMatch(/PUT the bytes/);
    expect(await usage()).toEqual(base);
  });

  test("concurrent confirms of one upload count it once", async () => {
    const p = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "race.bin", size: 100 });
    await fetch(p.body.url, { method: "PUT", headers: p.body.headers, body: bytesOf(100) });
    const base = await usage();
    const results = await Promise.all(Array.from({ length: 8 }, () => org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "race.bin" })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const after = await usage();
    expect(after.usedStorage).toBe(base.usedStorage + 100);
    expect(after.objectCount).toBe(base.objectCount + 1);
    expect(after.reservedStorage).toBe(base.reservedStorage - 100);
  });
});

describe("multipart upload", () => {
  async function putParts(sizes: number[], key: string) {
    const created = await org.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key, contentType: "video/mp4", size: sizes.reduce((a, b) => a + b, 0) });
    expect(created.status).toBe(200);
    // Read before matching: Bun's toMatchObject writes asymmetric matchers into the object it checks.
    const { uploadId } = created.body;
    expect(typeof uploadId).toBe("string");
    expect(created.body).toMatchObject({ bucketId: bucket.id, key, bucket: "uploads" });
    const chunks = sizes.map((s, i) => bytesOf(s, i + 3));
    const parts = [];
    for (const [i, chunk] of chunks.entries()) {
      const part = await org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key, uploadId, partNumber: i + 1 });
      expect(part.status).toBe(200);
      expect(part.body).toMatchObject({ method: "PUT", partNumber: i + 1, expiresIn: 900 });
      const res = await fetch(part.body.url, { method: "PUT", headers: part.body.headers, body: chunk });
      expect(res.status).toBe(200);
      parts.push({ partNumber: i + 1, etag: res.headers.get("etag")! });
    }
    const whole = new Uint8Array(sizes.reduce((a, b) => a + b, 0));
    let o = 0;
    for (const c of chunks) {
      whole.set(c, o);
      o += c.length;
    }
    return { uploadId, parts, whole };
  }

  test("three parts (5 MiB, 5 MiB, small) with a parts list", async () => {
    const { uploadId, parts, whole } = await putParts([5 * MiB, 5 * MiB, 1234], "big/with-list.mp4");
    const done = await org.admin.post("/api/presign/complete-upload", { bucketId: bucket.id, key: "big/with-list.mp4", uploadId, parts });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ uploadId, parts: 3, etag: expect.stringMatching(/-3"?$/) });
    const obj = (await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "big/with-list.mp4" })).body;
    expect(obj).toMatchObject({ size: whole.length, kind: "video", contentType: "video/mp4" });
    const dl = await org.admin.post("/api/presign/download", { objectId: obj.id });
    expect(sha256(await (await fetch(dl.body.url)).arrayBuffer())).toBe(sha256(whole));
  });

  test("without a parts list the uploaded parts are used, in order; tags at completion are applied", async () => {
    const { uploadId, whole } = await putParts([5 * MiB, 5 * MiB, 77], "big/no-list.mp4");
    const done = await org.admin.post("/api/presign/complete-upload", { bucketId: bucket.id, key: "big/no-list.mp4", uploadId, tags: ["final"] });
    expect(done.status).toBe(200);
    expect(done.body.parts).toBe(3);
    const tagging = await storageClient().send(new GetObjectTaggingCommand({ Bucket: server.config.s3.bucket, Key: `${bucket.id}/big/no-list.mp4` }));
    expect(tagging.TagSet?.map((t) => t.Key)).toEqual(["final"]);
    const obj = (await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "big/no-list.mp4" })).body;
    expect(obj.tags.map((t: { name: string }) => t.name)).toEqual(["final"]);
    const stream = await org.admin.get(`/api/media/${obj.id}/stream`);
    expect(stream.status).toBe(302);
    expect(sha256(await (await fetch(stream.headers.get("location")!)).arrayBuffer())).toBe(sha256(whole));
  });

  test("a wrong part list is a 400; an unknown upload is 404, an aborted one 409", async () => {
    const { uploadId, parts } = await putParts([5 * MiB, 10], "big/bad.mp4");
    const wrong = await org.admin.post("/api/presign/complete-upload", { bucketId: bucket.id, key: "big/bad.mp4", uploadId, parts: [{ partNumber: 1, etag: '"0000"' }, parts[1]] });
    expect(wrong.status).toBe(400);
    const unknown = await org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key: "big/bad.mp4", uploadId: "nope", partNumber: 1 });
    expect(unknown.status).toBe(404);
    const aborted = await org.admin.post("/api/presign/abort-multipart", { bucketId: bucket.id, key: "big/bad.mp4", uploadId });
    expect(aborted.status).toBe(200);
    expect((await org.admin.post("/api/presign/complete-upload", { bucketId: bucket.id, key: "big/bad.mp4", uploadId })).status).toBe(409);
  });
});

describe("quota and reservations", () => {
  test("a reservation beyond the allocation is 403 quota_exceeded", async () => {
    const small = await newOrg(server);
    const b = (await small.admin.post("/api/buckets", { name: "q" })).body;
    await db().update(orgUsage).set({ allocatedStorage: 1000 }).where(eq(orgUsage.orgId, small.orgId));
    expect((await small.admin.post("/api/presign/upload", { bucketId: b.id, key: "a", size: 600 })).status).toBe(200);
    const over = await small.admin.post("/api/presign/upload", { bucketId: b.id, key: "b", size: 500 });
    expect(over.status).toBe(403);
    expect(over.body.error.code).toBe("quota_exceeded");
    expect(over.body.error.details).toMatchObject({ requested: 500, reservedStorage: 600, allocatedStorage: 1000 });
    const mp = await small.admin.post("/api/presign/create-multipart", { bucketId: b.id, key: "c", size: 401 });
    expect(mp.status).toBe(403);
    // concurrent reservations never overshoot
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => small.admin.post("/api/presign/upload", { bucketId: b.id, key: `p${i}`, size: 100 })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(4);
    expect((await usage(small.orgId)).reservedStorage).toBe(1000);
  });

  test("reservations that are never confirmed expire and are released by the sweeper", async () => {
    const o = await newOrg(server);
    const b = (await o.admin.post("/api/buckets", { name: "sweep" })).body;
    await o.admin.post("/api/presign/upload", { bucketId: b.id, key: "x", size: 700 });
    const mp = await o.admin.post("/api/presign/create-multipart", { bucketId: b.id, key: "y", size: 300 });
    expect((await usage(o.orgId)).reservedStorage).toBe(1000);
    await server.services.maintenance.runOnce();
    expect((await usage(o.orgId)).reservedStorage).toBe(1000);
    clock.advance(25 * 3600_000);
    try {
      await server.services.maintenance.runOnce();
    } finally {
      clock.advance(-25 * 3600_000);
    }
    expect((await usage(o.orgId)).reservedStorage).toBe(0);
    expect(await db().select().from(uploadReservations).where(eq(uploadReservations.orgId, o.orgId))).toEqual([]);
    // the abandoned multipart upload was aborted in storage; its id is known, its state forbids the call
    expect((await o.admin.post("/api/presign/upload-part", { bucketId: b.id, key: "y", uploadId: mp.body.uploadId, partNumber: 1 })).status).toBe(409);
  });
});

describe("downloads and streams", () => {
  test("download and stream return the same bytes; both count egress", async () => {
    const body = bytesOf(4321, 9);
    const obj = await upload(org.admin, bucket.id, "dl/file name ü.bin", body);
    const dl = await org.admin.post("/api/presign/download", { objectId: obj.id });
    expect(dl.status).toBe(200);
    expect(dl.body).toMatchObject({ method: "GET", objectId: obj.id, key: "dl/file name ü.bin", expiresIn: 3600 });
    const viaDownload = await fetch(dl.body.url);
    expect(viaDownload.headers.get("content-disposition")).toContain("attachment");
    const viaStream = await fetch((await org.admin.get(`/api/media/${obj.id}/stream`)).headers.get("location")!);
    const a = sha256(await viaDownload.arrayBuffer());
    expect(a).toBe(sha256(body));
    expect(sha256(await viaStream.arrayBuffer())).toBe(a);
    const { usageMonthly } = await import("../../db/schema/index.ts");
    await server.services.rollup.flush(); // the counter row holds egress once the rollup folded it
    const [m] = await db().select().from(usageMonthly).where(eq(usageMonthly.orgId, org.orgId));
    expect(m!.egressBytes).toBeGreaterThanOrEqual(2 * 4321);
  });

  test("an expired download URL is refused by storage", async () => {
    const obj = await upload(org.admin, bucket.id, "dl/old.bin", "x");
    clock.advance(-3 * 3600_000);
    try {
      const dl = await org.admin.post("/api/presign/download", { objectId: obj.id, expiresIn: 60 });
      expect((await fetch(dl.body.url)).status).toBe(403);
    } finally {
      clock.advance(3 * 3600_000);
    }
  });
});

describe("presign inputs out of bounds (keys, sizes, tags, parts, expiry) answer 400", () => {
  const cases: [string, string, Record<string, unknown>, string][] = [
    ["upload", "/api/presign/upload", { key: "/leading" }, "key"],
    ["upload", "/api/presign/upload", { key: "a/../b" }, "key"],
    ["upload", "/api/presign/upload", { key: "a/./b" }, "key"],
    ["upload", "/api/presign/upload", { key: "ctl\u0001" }, "key"],
    ["upload", "/api/presign/upload", { key: "" }, "key"],
    ["upload", "/api/presign/upload", { key: "é".repeat(513) }, "key"],
    ["upload", "/api/presign/upload", { key: "k", size: -1 }, "size"],
    ["upload", "/api/presign/upload", { key: "k", tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, "tags"],
    ["upload", "/api/presign/upload", { key: "k", tags: ["x".repeat(129)] }, "tags.0"],
    ["upload", "/api/presign/upload", { key: "k", tags: ["a&b"] }, "tags.0"],
    ["upload", "/api/presign/upload", { key: "k", contentType: "nonsense" }, "contentType"],
    ["part", "/api/presign/upload-part", { key: "k", uploadId: "u", partNumber: 0 }, "partNumber"],
    ["part", "/api/presign/upload-part", { key: "k", uploadId: "u", partNumber: 10001 }, "partNumber"],
    ["complete", "/api/presign/complete-upload", { key: "k", uploadId: "u", tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }, "tags"],
  ];
  for (const [name, path, body, field] of cases) {
    test(`${name}: ${JSON.stringify(body).slice(0, 60)}`, async () => {
      const res = await org.admin.post(path, { bucketId: bucket.id, ...body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
    });
  }
  test("download expiresIn 60..604800", async () => {
    const obj = await upload(org.admin, bucket.id, "bounds.bin", "x");
    for (const expiresIn of [59, 604801, 1.5]) expect((await org.admin.post("/api/presign/download", { objectId: obj.id, expiresIn })).status).toBe(400);
    for (const expiresIn of [60, 604800]) expect((await org.admin.post("/api/presign/download", { objectId: obj.id, expiresIn })).body.expiresIn).toBe(expiresIn);
    const ten = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "ten", tags: Array.from({ length: 10 }, (_, i) => `t${i}`), size: 0 });
    expect(ten.status).toBe(200);
    expect((await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "k128", tags: ["x".repeat(128)] })).status).toBe(200);
    expect((await org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key: "k", uploadId: "u", partNumber: 10000 })).status).toBe(404);
  });
});

describe("access", () => {
  test("a read key cannot upload; a read key can download", async () => {
    const read = await org.keyClient(["read"]);
    for (const path of ["/api/presign/upload", "/api/presign/create-multipart", "/api/presign/confirm"]) {
      const res = await read.post(path, { bucketId: bucket.id, key: "r" });
      expect(res.status).toBe(403);
    }
    const obj = await upload(org.admin, bucket.id, "readable.txt", "hello");
    expect((await read.post("/api/presign/download", { objectId: obj.id })).status).toBe(200);
    const write = await org.keyClient(["write"]);
    expect((await write.post("/api/presign/download", { objectId: obj.id })).status).toBe(403);
  });

  test("a bucket-restricted key cannot reach another bucket", async () => {
    const mine = (await org.admin.post("/api/buckets", { name: "restricted-a" })).body;
    const key = await org.keyClient(["read", "write"], { bucketId: mine.id });
    expect((await key.post("/api/presign/upload", { bucketId: mine.id, key: "ok" })).status).toBe(200);
    const res = await key.post("/api/presign/upload", { bucketId: bucket.id, key: "nope" });
    expect(res.status).toBe(403);
    const obj = await upload(org.admin, bucket.id, "elsewhere.txt", "x");
    expect((await key.post("/api/presign/download", { objectId: obj.id })).status).toBe(403);
    expect((await key.get(`/api/media/${obj.id}`)).status).toBe(403);
    const list = await key.get("/api/media");
    expect(list.body.data.every((m: { bucketId: string }) => m.bucketId === mine.id)).toBe(true);
  });

  test("another organization's bucket or object is 404 before anything is signed", async () => {
    const obj = await upload(org.admin, bucket.id, "private.txt", "secret");
    for (const [path, body] of [
      ["/api/presign/upload", { bucketId: bucket.id, key: "x" }],
      ["/api/presign/create-multipart", { bucketId: bucket.id, key: "x" }],
      ["/api/presign/upload-part", { bucketId: bucket.id, key: "x", uploadId: "u", partNumber: 1 }],
      ["/api/presign/complete-upload", { bucketId: bucket.id, key: "x", uploadId: "u" }],
      ["/api/presign/confirm", { bucketId: bucket.id, key: "private.txt" }],
      ["/api/presign/download", { objectId: obj.id }],
    ] as const) {
      const res = await other.admin.post(path, body);
      expect(res.status).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain("X-Amz-Signature");
    }
    expect((await other.admin.get(`/api/media/${obj.id}`)).status).toBe(404);
    expect((await other.admin.get(`/api/media/${obj.id}/stream`)).status).toBe(404);
    expect((await other.admin.delete(`/api/media/${obj.id}`)).status).toBe(404);
    expect((await org.admin.get(`/api/media/${obj.id}`)).status).toBe(200);
  });
});
