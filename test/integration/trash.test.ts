import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { objectPath } from "../../domain/media/storage-keys.ts";
import { TEST_PLANS } from "../support/billing.ts";
import { eventually } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import { withServerAndOrg } from "../support/fixtures.ts";
import { newOrg, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * The trash: deleted objects listed within retention, restored as they were (tags,
 * categories, thumbnail, set memberships; usage and search follow), refused when the key was
 * used since or there is no room, purged now on request.
 */

let server: TestServer;
let org: TestOrg;
let bucket: { id: string; name: string };

withServerAndOrg({
  server: { env: { PLANS: JSON.stringify(TEST_PLANS), WORKER_BACKOFF_MS: "50" } },
  ready: async (made) => {
    ({ server, org } = made);
    // Room beyond the tiny test tier, which the quota test below uses.
    await org.admin.post("/api/billing/capacity/add", { gb: 1 });
    bucket = await newBucket(org, "trash");
  },
});

const usage = async (o = org) => (await o.admin.get("/api/usage")).body as { usedStorage: number; objectCount: number };
const trash = async (o = org, query = "") => (await o.admin.get(`/api/trash${query}`)).body as { data: any[]; total: number };

describe("trash and restore", () => {
  test("a restored object comes back with its tags, categories, thumbnail and set memberships; usage and search follow", async () => {
    const image = await upload(org.admin, bucket.id, "keep/sunset.png", await png(80, 40), { contentType: "image/png", tags: ["Sunset"] });
    const partner = await upload(org.admin, bucket.id, "keep/partner.txt", "partner", { contentType: "text/plain" });
    const category = (await org.admin.post("/api/categories", { name: "Skies" })).body;
    await org.admin.put(`/api/objects/${image.id}/categories`, { categoryIds: [category.id] });
    await org.admin.put(`/api/media/${image.id}/metadata`, { metadata: { caption: "zqtrashcaption" } });
    const thumbnail = await eventually(async () => {
      const got = (await org.admin.get(`/api/media/${image.id}`)).body;
      return got.thumbnail?.state === "ready" ? got.thumbnail : undefined;
    });
    const baseSet = (await org.admin.post("/api/sets", { name: "around it", baseObjectId: image.id })).body;
    const otherSet = (await org.admin.post("/api/sets", { name: "holding it", baseObjectId: partner.id })).body;
    const item = (await org.admin.post(`/api/sets/${otherSet.id}/items`, { objectId: image.id, aspectRatio: "2:1", width: 80, height: 40, role: "wide" })).body;
    const before = await usage();
    const original = (await org.admin.get(`/api/media/${image.id}`)).body;

    expect((await org.admin.delete(`/api/media/${image.id}`)).status).toBe(200);
    expect((await org.admin.get(`/api/media/${image.id}`)).status).toBe(404);
    expect(await usage()).toMatchObject({ usedStorage: before.usedStorage - image.size, objectCount: before.objectCount - 1 });
    expect((await org.admin.get("/api/search?q=zqtrashcaption")).body.total).toBe(0);
    const listed = (await trash()).data.find((t) => t.id === image.id);
    expect(listed).toMatchObject({ key: "keep/sunset.png", restorable: true, blockedBy: null, tags: [expect.objectContaining({ slug: "sunset" })], categories: [expect.objectContaining({ id: category.id })] });
    expect(new Date(listed.restorableUntil).getTime() - new Date(listed.deletedAt).getTime()).toBe(7 * 86_400_000);
    expect((await org.admin.get(`/api/sets/${baseSet.id}`)).body.baseObjectDeleted).toBe(true);

    const restored = await org.admin.post(`/api/trash/${image.id}/restore`);
    expect(restored.status).toBe(200);
    const { updatedAt: _a, ...was } = original;
    const { updatedAt: _b, ...now } = restored.body;
    expect(now).toEqual(was);
    expect(restored.body.thumbnail).toEqual(thumbnail);
    expect(await usage()).toMatchObject({ usedStorage: before.usedStorage, objectCount: before.objectCount });
    expect((await org.admin.get("/api/search?q=zqtrashcaption")).body.media.map((m: { id: string }) => m.id)).toEqual([image.id]);
    expect((await org.admin.get(`/api/sets/${baseSet.id}`)).body.baseObjectDeleted).toBe(false);
    const held = (await org.admin.get(`/api/sets/${otherSet.id}`)).body.items.find((i: { id: string }) => i.id === item.id);
    expect(held).toMatchObject({ objectId: image.id });
    expect((await org.admin.get(`/api/media/${image.id}/thumbnail`)).status).toBe(200);
    expect((await trash()).data.map((t) => t.id)).not.toContain(image.id);
    const events = (await org.admin.get("/api/usage/events?type=object_restored")).body.data;
    expect(events).toEqual([expect.objectContaining({ objectId: image.id, bytes: image.size })]);
  });

  test("an object deleted before its thumbnail was made gets it after the restore", async () => {
    const obj = await upload(org.admin, bucket.id, "early/gone.png", await png(30, 30), { contentType: "image/png" });
    // Deleted at once, and the pending row put back as if the job had not run yet.
    await org.admin.delete(`/api/media/${obj.id}`);
    await server.services.deps.db.execute(sql`update derivatives set state = 'pending', etag = null, storage_key = null where object_id = ${obj.id}`);
    expect((await org.admin.post(`/api/trash/${obj.id}/restore`)).status).toBe(200);
    await eventually(async () => ((await org.admin.get(`/api/media/${obj.id}`)).body.thumbnail?.state === "ready" ? true : undefined));
  });

  test("a key used again since the delete: the newer upload's bytes won, the deleted object cannot come back", async () => {
    const first = await upload(org.admin, bucket.id, "reuse/doc.txt", "first version", { contentType: "text/plain" });
    await org.admin.delete(`/api/media/${first.id}`);
    const second = await upload(org.admin, bucket.id, "reuse/doc.txt", "second version", { contentType: "text/plain" });
    expect(second.id).not.toBe(first.id);

    const inUse = await org.admin.post(`/api/trash/${first.id}/restore`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.details).toEqual({ reason: "key_in_use", objectId: second.id });
    expect((await trash()).data.find((t) => t.id === first.id)).toMatchObject({ restorable: false, blockedBy: "key_in_use" });

    await org.admin.delete(`/api/media/${second.id}`);
    const reused = await org.admin.post(`/api/trash/${first.id}/restore`);
    expect(reused.status).toBe(409);
    expect(reused.body.error.details).toEqual({ reason: "key_reused" });
    const listed = (await trash()).data;
    expect(listed.find((t) => t.id === first.id)).toMatchObject({ restorable: false, blockedBy: "key_reused" });
    expect(listed.find((t) => t.id === second.id)).toMatchObject({ restorable: true, blockedBy: null });
    // The newer one comes back with its own bytes.
    expect((await org.admin.post(`/api/trash/${second.id}/restore`)).status).toBe(200);
    const url = (await org.admin.post("/api/presign/download", { objectId: second.id })).body.url;
    expect(await (await fetch(url)).text()).toBe("second version");
  });

  test("bytes put at the key without a confirm replaced them too: 409", async () => {
    const obj = await upload(org.admin, bucket.id, "overwritten/raw.txt", "original", { contentType: "text/plain" });
    await org.admin.delete(`/api/media/${obj.id}`);
    await server.services.deps.storage.put(objectPath(bucket.id, "overwritten/raw.txt"), new TextEncoder().encode("other bytes"), { contentType: "text/plain" });
    const res = await org.admin.post(`/api/trash/${obj.id}/restore`);
    expect(res.status).toBe(409);
    expect(res.body.error.details).toEqual({ reason: "bytes_replaced" });
  });

  test("the quota is checked again: no room, no restore", async () => {
    const small = await newOrg(server, "Small");
    const b = await newBucket(small, "full");
    // The test free tier allocates 10,000 bytes.
    const a = await upload(small.admin, b.id, "a.bin", "x".repeat(6_000));
    await small.admin.delete(`/api/media/${a.id}`);
    await upload(small.admin, b.id, "b.bin", "x".repeat(6_000));
    const res = await small.admin.post(`/api/trash/${a.id}/restore`);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: "quota_exceeded", details: { requested: 6_000, usedStorage: 6_000, allocatedStorage: 10_000 } });
    expect((await trash(small)).data.map((t) => t.id)).toEqual([a.id]);
  });

  test("purge now: gone from the trash, the bytes too; past retention the trash no longer lists it", async () => {
    const obj = await upload(org.admin, bucket.id, "purge/now.png", await png(20, 20), { contentType: "image/png" });
    await eventually(async () => ((await org.admin.get(`/api/media/${obj.id}`)).body.thumbnail?.state === "ready" ? true : undefined));
    await org.admin.delete(`/api/media/${obj.id}`);
    const purged = await org.admin.delete(`/api/trash/${obj.id}`);
    expect(purged.status).toBe(200);
    expect(purged.body).toEqual({ id: obj.id, purged: true });
    expect(await server.services.deps.storage.head(objectPath(bucket.id, "purge/now.png"))).toBeNull();
    expect((await org.admin.post(`/api/trash/${obj.id}/restore`)).status).toBe(404);
    expect((await org.admin.delete(`/api/trash/${obj.id}`)).status).toBe(404);
    expect((await trash()).data.map((t) => t.id)).not.toContain(obj.id);

    const old = await upload(org.admin, bucket.id, "purge/old.txt", "old", { contentType: "text/plain" });
    await org.admin.delete(`/api/media/${old.id}`);
    await server.services.deps.db.execute(sql`update media_objects set deleted_at = now() - interval '8 days' where id = ${old.id}`);
    expect((await trash()).data.map((t) => t.id)).not.toContain(old.id);
    expect((await org.admin.post(`/api/trash/${old.id}/restore`)).status).toBe(404);
    // A live object is not in the trash either.
    const live = await upload(org.admin, bucket.id, "purge/live.txt", "live", { contentType: "text/plain" });
    expect((await org.admin.post(`/api/trash/${live.id}/restore`)).status).toBe(404);
    expect((await org.admin.delete(`/api/trash/${live.id}`)).status).toBe(404);
  });

  test("the trash lists by bucket, newest deletion first", async () => {
    const other = await newBucket(org, "trash-other");
    const x = await upload(org.admin, other.id, "x.txt", "x", { contentType: "text/plain" });
    const y = await upload(org.admin, other.id, "y.txt", "y", { contentType: "text/plain" });
    await org.admin.delete(`/api/media/${x.id}`);
    await org.admin.delete(`/api/media/${y.id}`);
    const listed = await trash(org, `?bucketId=${other.id}`);
    expect(listed.data.map((t) => t.id)).toEqual([y.id, x.id]);
    expect(listed.total).toBe(2);
  });
});
