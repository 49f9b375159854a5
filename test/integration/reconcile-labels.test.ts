import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";

/**
 * Reconcile and an object's shown labels (media_objects.labels). The database keeps them
 * current through triggers, so they go stale only by a write that bypasses them: planted here
 * as the column written directly, and as a link inserted with triggers off
 * (session_replication_role = replica, as a replication subscriber or a data-only restore runs).
 * Reconcile reports both, fix rewrites them from the links, and a second run finds none.
 */
let server: TestServer;
let org: TestOrg;
let other: TestOrg;

beforeAll(async () => {
  server = await startServer();
  [org, other] = await Promise.all([newOrg(server, "Labels"), newOrg(server, "Elsewhere")]);
});

afterAll(async () => {
  await server?.stop();
});

test("stale labels are reported, repaired by fix, and gone after", async () => {
  const db = server.services.deps.db;
  const bucket = (await org.admin.post("/api/buckets", { name: "labelled" })).body as { id: string };
  const tag = (await org.admin.post("/api/tags", { name: "Kept" })).body as { id: string; name: string; slug: string };
  const overwritten = await upload(org.admin, bucket.id, "overwritten.txt", bytesOf(11), { contentType: "text/plain" });
  const bypassed = await upload(org.admin, bucket.id, "bypassed.txt", bytesOf(22), { contentType: "text/plain" });
  const fine = await upload(org.admin, bucket.id, "fine.txt", bytesOf(33), { contentType: "text/plain", tags: ["Kept"] });
  expect((await org.admin.put(`/api/objects/${overwritten.id}/tags`, { tagIds: [tag.id] })).status).toBe(200);

  await db.execute(sql`update media_objects set labels = '{"tags":[],"categories":[]}'::jsonb where id = ${overwritten.id}`);
  await db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    await tx.execute(sql`insert into object_tags (org_id, object_id, tag_id) values (${org.orgId}, ${bypassed.id}, ${tag.id})`);
  });
  const shown = async (id: string) => ((await org.admin.get(`/api/media/${id}`)).body.tags as { slug: string }[]).map((t) => t.slug);
  expect([await shown(overwritten.id), await shown(bypassed.id), await shown(fine.id)]).toEqual([[], [], ["kept"]]);

  const report = (await org.admin.post("/api/reconcile", { fix: false })).body;
  expect(report.staleLabels).toMatchObject({ count: 2, bytes: 33 });
  expect(report.staleLabels.samples.map((s: { objectId: string; path: string }) => [s.objectId, s.path]).sort()).toEqual(
    [
      [overwritten.id, `${bucket.id}/overwritten.txt`],
      [bypassed.id, `${bucket.id}/bypassed.txt`],
    ].sort(),
  );
  expect(report.fixed.relabeledObjects).toBe(0);
  expect(await shown(overwritten.id)).toEqual([]);
  expect((await other.admin.post("/api/reconcile", { fix: false })).body.staleLabels.count).toBe(0);

  const fixed = (await org.admin.post("/api/reconcile", { fix: true })).body;
  expect([fixed.staleLabels.count, fixed.fixed.relabeledObjects]).toEqual([2, 2]);
  const want = [{ id: tag.id, name: tag.name, slug: tag.slug }];
  for (const id of [overwritten.id, bypassed.id, fine.id]) expect((await org.admin.get(`/api/media/${id}`)).body.tags).toEqual(want);
  const listed = (await org.admin.get(`/api/media?bucketId=${bucket.id}&tags=kept`)).body.data as { tags: unknown }[];
  expect(listed.map((v) => v.tags)).toEqual([want, want, want]);

  expect((await org.admin.post("/api/reconcile", { fix: false })).body.staleLabels.count).toBe(0);
});
