import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { derivatives, orgUsage, uploadReservations } from "../../db/schema/index.ts";
import { reconcileUnattributed } from "../../domain/reconcile/reconcile.ts";
import { objectPath } from "../../domain/media/storage-keys.ts";
import { cliJson, removeTempConfigHomes } from "../support/cli.ts";
import { eventually } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";

/**
 * Reconcile over planted inconsistencies of each kind: an upload PUT and never confirmed, bytes
 * written behind the catalogue's back, an object whose bytes were lost, a thumbnail whose file
 * was lost, derivative files of objects that are gone and of a replaced thumbnail, counters
 * that drifted, storage of a bucket that no longer exists. The report names each, fix repairs
 * what is safe and says so, and a second run finds nothing left but what it must not touch.
 * Another organization's data is never touched.
 */
let server: TestServer;
let a: TestOrg;
let b: TestOrg;
let bucket: { id: string };
let otherBucket: { id: string };
const stray = { bucket: crypto.randomUUID(), object: crypto.randomUUID() };
let lost: { id: string };
let picture: { id: string };
let thumbnailKey: string;

const put = (path: string, size: number) => server.services.deps.storage.put(path, bytesOf(size), { contentType: "application/octet-stream" });
const head = (path: string) => server.services.deps.storage.head(path);

beforeAll(async () => {
  server = await startServer();
  [a, b] = await Promise.all([newOrg(server, "A"), newOrg(server, "B")]);
  bucket = (await a.admin.post("/api/buckets", { name: "planted" })).body;
  otherBucket = (await b.admin.post("/api/buckets", { name: "untouched" })).body;
  await upload(a.admin, bucket.id, "fine.txt", bytesOf(100), { contentType: "text/plain" });
  await upload(b.admin, otherBucket.id, "b-fine.txt", bytesOf(50), { contentType: "text/plain" });

  // 1. An upload PUT and never confirmed, its reservation expired (the sweeper's case).
  const never = await a.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "never-confirmed.bin", size: 300 });
  expect((await fetch(never.body.url, { method: "PUT", headers: never.body.headers, body: bytesOf(300) })).status).toBe(200);
  await server.services.deps.db.update(uploadReservations).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(uploadReservations.key, "never-confirmed.bin"));
  // 2. Bytes nobody presigned at all.
  await put(objectPath(bucket.id, "behind-the-back.bin"), 200);
  // 3. An upload still in progress: bytes PUT, reservation alive. Not a problem.
  const pending = await a.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "in-progress.bin", size: 40 });
  expect((await fetch(pending.body.url, { method: "PUT", headers: pending.body.headers, body: bytesOf(40) })).status).toBe(200);
  // 4. An object whose bytes were lost.
  lost = await upload(a.admin, bucket.id, "lost.txt", bytesOf(70), { contentType: "text/plain" });
  await server.services.deps.storage.delete(objectPath(bucket.id, "lost.txt"));
  // 5. A thumbnail whose file was lost.
  picture = await upload(a.admin, bucket.id, "picture.png", await png(400, 200), { contentType: "image/png" });
  await eventually(async () => ((await a.admin.get(`/api/media/${picture.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "the thumbnail" });
  const [thumb] = await server.services.deps.db.select().from(derivatives).where(eq(derivatives.objectId, picture.id));
  thumbnailKey = thumb!.storageKey!;
  await server.services.deps.storage.delete(thumbnailKey);
  // 6. Derivative files of an object that is gone, and a stale one of a live object.
  await put(`_derivatives/${bucket.id}/${stray.object}/thumb-gone.webp`, 60);
  await put(`_derivatives/${bucket.id}/${picture.id}/thumb-stale.webp`, 30);
  // 7. Counters that drifted (folded first, so the bucket's count is the stored one).
  await server.services.rollup.flush();
  await server.services.deps.db
    .update(orgUsage)
    .set({ usedStorage: sql`${orgUsage.usedStorage} + 999`, objectCount: sql`${orgUsage.objectCount} + 2` })
    .where(eq(orgUsage.orgId, a.orgId));
  await server.services.deps.db.execute(sql`update buckets set object_count = 77 where id = ${bucket.id}`);
  // 8. Storage of a bucket that does not exist.
  await put(`${stray.bucket}/left-behind.bin`, 500);
  await put(`_derivatives/${stray.bucket}/${stray.object}/thumb.webp`, 20);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  removeTempConfigHomes();
});

describe("reconcile", () => {
  test("reports each kind of inconsistency, per organization, and changes nothing", async () => {
    const res = await a.admin.post("/api/reconcile", {});
    expect(res.status).toBe(200);
    const r = res.body;
    expect(r).toMatchObject({ orgId: a.orgId, name: "A", fix: false });
    expect(r.bytesWithoutRow.samples.map((s: { path: string }) => s.path).sort()).toEqual(
      [objectPath(bucket.id, "behind-the-back.bin"), objectPath(bucket.id, "never-confirmed.bin"), `_derivatives/${bucket.id}/${picture.id}/thumb-stale.webp`].sort(),
    );
    expect({ count: r.bytesWithoutRow.count, bytes: r.bytesWithoutRow.bytes }).toEqual({ count: 3, bytes: 530 });
    expect(r.rowsWithoutBytes.samples).toEqual(
      expect.arrayContaining([
        { path: objectPath(bucket.id, "lost.txt"), size: 70, objectId: lost.id },
        expect.objectContaining({ path: thumbnailKey, objectId: picture.id }),
      ]),
    );
    expect(r.rowsWithoutBytes.count).toBe(2);
    expect(r.derivativesWithoutSource).toMatchObject({ count: 1, bytes: 60, samples: [{ path: `_derivatives/${bucket.id}/${stray.object}/thumb-gone.webp` }] });
    expect(r.pendingUploads).toEqual({ count: 1, bytes: 40 });
    expect(r.usage.consistent).toBe(false);
    expect(r.usage.recorded.usedStorage - r.usage.counted.usedStorage).toBe(999);
    expect(r.usage.recorded.objectCount - r.usage.counted.objectCount).toBe(2);
    expect(r.usage.buckets).toEqual([{ bucketId: bucket.id, recorded: 77, counted: 3 }]);
    expect(r.fixed).toEqual({ deletedObjects: 0, deletedBytes: 0, regeneratedThumbnails: 0, usageRepaired: false, relabeledObjects: 0 });
    // Nothing of B in A's report.
    expect(JSON.stringify(r)).not.toContain(otherBucket.id);
    expect(await head(objectPath(bucket.id, "never-confirmed.bin"))).not.toBeNull();

    const b1 = (await b.admin.post("/api/reconcile", {})).body;
    expect([b1.bytesWithoutRow.count, b1.rowsWithoutBytes.count, b1.derivativesWithoutSource.count, b1.usage.consistent]).toEqual([0, 0, 0, true]);
  });

  test("storage of no bucket is found by the operator's run, not by an organization's", async () => {
    const found = await reconcileUnattributed(server.services.deps, { fix: false, olderThanMs: 0 });
    expect(found.bytesWithoutBucket.samples.map((s) => s.path)).toContain(`${stray.bucket}/left-behind.bin`);
    expect(found.derivativesWithoutBucket.samples.map((s) => s.path)).toContain(`_derivatives/${stray.bucket}/${stray.object}/thumb.webp`);
  });

  test("fix deletes the stray bytes, makes the thumbnail again, corrects the counters, and says so", async () => {
    // With the default age limit nothing this young is deleted.
    const cautious = (await a.admin.post("/api/reconcile", { fix: true })).body;
    expect(cautious.fixed.deletedObjects).toBe(0);
    expect(cautious.notes.join(" ")).toContain("younger than 24 h");

    const res = await a.admin.post("/api/reconcile", { fix: true, olderThanHours: 0 });
    expect(res.status).toBe(200);
    // The first fix run already repaired the counters and the thumbnail; this one deletes.
    expect(res.body.fixed).toMatchObject({ deletedObjects: 4, deletedBytes: 590 });
    expect(cautious.fixed).toMatchObject({ regeneratedThumbnails: 1, usageRepaired: true });
    for (const path of [objectPath(bucket.id, "never-confirmed.bin"), objectPath(bucket.id, "behind-the-back.bin"), `_derivatives/${bucket.id}/${stray.object}/thumb-gone.webp`]) {
      expect(await head(path)).toBeNull();
    }
    // What must stay, stays: live objects, the upload in progress, B's data.
    expect(await head(objectPath(bucket.id, "fine.txt"))).not.toBeNull();
    expect(await head(objectPath(bucket.id, "in-progress.bin"))).not.toBeNull();
    expect(await head(objectPath(otherBucket.id, "b-fine.txt"))).not.toBeNull();
    await eventually(async () => ((await a.admin.get(`/api/media/${picture.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "the thumbnail made again" });

    const again = (await a.admin.post("/api/reconcile", {})).body;
    expect([again.bytesWithoutRow.count, again.derivativesWithoutSource.count, again.usage.consistent]).toEqual([0, 0, true]);
    // The lost object's row stays until its owner decides: restore its bytes or delete it.
    expect(again.rowsWithoutBytes.samples).toEqual([{ path: objectPath(bucket.id, "lost.txt"), size: 70, objectId: lost.id }]);
    expect(again.notes.join(" ")).toContain("restore the bytes");
    const usage = (await a.admin.get("/api/usage")).body;
    expect(usage.objectCount).toBe(again.usage.counted.objectCount);
  });

  test("the CLI has it as a command derived from the registry: media reconcile run", async () => {
    const report = await cliJson(["reconcile", "run"], { url: server.url, key: a.adminKey.secret });
    expect(report).toMatchObject({ orgId: a.orgId, fix: false, usage: { consistent: true } });
  });

  test("a key restricted to one bucket, or without admin, may not run it", async () => {
    const restricted = await a.keyClient(["admin"], { bucketId: bucket.id });
    expect((await restricted.post("/api/reconcile", {})).status).toBe(403);
    const writer = await a.keyClient(["read", "write", "delete"]);
    expect((await writer.post("/api/reconcile", {})).status).toBe(403);
  });
});
