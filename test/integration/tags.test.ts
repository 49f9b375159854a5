import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { mediaObjects, objectTags, tags } from "../../db/schema/index.ts";
import { labelsFor } from "../../domain/labels/object-labels.ts";
import { tagKind } from "../../domain/labels/kinds.ts";
import { replaceObjectLabels } from "../../domain/labels/labels.ts";
import { ensureTagsByName } from "../../domain/labels/tags.ts";
import { insertObject, newBucket, softDeleteObject } from "../support/objects.ts";
import { withTwoOrgs } from "../support/fixtures.ts";
import { newOrg, type TestOrg, type TestServer } from "../support/server.ts";

let server: TestServer;
let org: TestOrg;
let other: TestOrg;
let bucket: { id: string };
let otherBucket: { id: string };

withTwoOrgs({ ready: (made) => void ({ server, org, other, bucket, otherBucket } = made) });

const uuid = /^[0-9a-f-]{36}$/;
const createTag = async (name: string, who: TestOrg = org) => {
  const res = await who.admin.post("/api/tags", { name });
  expect(res.status).toBe(201);
  return res.body as { id: string; name: string; slug: string };
};
const tagIdsOf = async (objectId: string) =>
  (await server.services.deps.db.select({ tagId: objectTags.tagId }).from(objectTags).where(eq(objectTags.objectId, objectId)))
    .map((r) => r.tagId)
    .sort();

describe("tags", () => {
  test("create answers 201 with a slug derived from the name", async () => {
    const res = await org.admin.post("/api/tags", { name: "  Summer Sale 2024! " });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(uuid),
      name: "Summer Sale 2024!",
      slug: "summer-sale-2024",
      objectCount: 0,
      createdAt: expect.any(String),
    });
    expect((await createTag("Café Crème")).slug).toBe("cafe-creme");
    expect((await createTag("東京 タワー")).slug).toBe("東京-タワー");
  });

  test("a name whose slug exists is 409 with the existing id; other organizations are independent", async () => {
    const first = await createTag("Red Car");
    for (const name of ["Red Car", "red car", "RED-CAR", "red_car"]) {
      const res = await org.admin.post("/api/tags", { name });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("conflict");
      expect(res.body.error.details).toEqual({ existingId: first.id, slug: "red-car" });
    }
    expect((await other.admin.post("/api/tags", { name: "Red Car" })).status).toBe(201);
  });

  test("invalid names are 400 validation_error on name", async () => {
    for (const name of ["", "   ", "!!!", "x".repeat(129), 42, "tab\there", null]) {
      const res = await org.admin.post("/api/tags", { name });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details[0].path).toBe("name");
    }
    expect((await org.admin.post("/api/tags", {})).status).toBe(400);
    expect((await org.admin.post("/api/tags", { name: "ok", extra: 1 })).status).toBe(400);
  });

  test("list: search by name or slug, pagination, only this organization", async () => {
    const o = await newOrg(server, "list org");
    for (const n of ["Landscape", "Night Sky", "night-life", "Portrait"]) await createTag(n, o);
    await createTag("Night Owl", other);
    const all = await o.admin.get("/api/tags");
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(4);
    expect(all.body.hasMore).toBe(false);
    expect(all.body.data.map((t: { slug: string }) => t.slug)).toEqual(["landscape", "night-life", "night-sky", "portrait"]);
    const night = await o.admin.get("/api/tags?search=NIGHT");
    expect(night.body.data.map((t: { name: string }) => t.name).sort()).toEqual(["Night Sky", "night-life"]);
    expect(night.body.total).toBe(2);
    // "night sky" matches through the slug form too
    expect((await o.admin.get("/api/tags?search=night%20sky")).body.data.map((t: { slug: string }) => t.slug)).toEqual(["night-sky"]);
    // LIKE wildcards are literal
    expect((await o.admin.get("/api/tags?search=%25")).body.total).toBe(0);
    expect((await o.admin.get("/api/tags?search=_")).body.total).toBe(0);
    const page = await o.admin.get("/api/tags?limit=3&offset=0");
    expect(page.body.data).toHaveLength(3);
    expect(page.body.hasMore).toBe(true);
    const last = await o.admin.get("/api/tags?limit=3&offset=3");
    expect(last.body.data).toHaveLength(1);
    expect(last.body.hasMore).toBe(false);
    for (const q of ["limit=0", "limit=201", "offset=-1"]) expect((await o.admin.get(`/api/tags?${q}`)).status).toBe(400);
  });

  test("objects_set_tags replaces the whole list (never appends)", async () => {
    const [a, b, c] = [await createTag("replace a"), await createTag("replace b"), await createTag("replace c")];
    const obj = await insertObject(server, org, bucket.id);
    const first = await org.admin.put(`/api/objects/${obj.id}/tags`, { tagIds: [a.id, b.id] });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      objectId: obj.id,
      tags: [
        { id: a.id, name: "replace a", slug: "replace-a" },
        { id: b.id, name: "replace b", slug: "replace-b" },
      ],
    });
    const second = await org.admin.put(`/api/objects/${obj.id}/tags`, { tagIds: [c.id, c.id] });
    expect(second.body.tags.map((t: { id: string }) => t.id)).toEqual([c.id]);
    expect(await tagIdsOf(obj.id)).toEqual([c.id]);
    const cleared = await org.admin.put(`/api/objects/${obj.id}/tags`, { tagIds: [] });
    expect(cleared.body.tags).toEqual([]);
    expect(await tagIdsOf(obj.id)).toEqual([]);
  });

  test("every object of a list page carries its own tags and categories, ordered by slug, filtered or not", async () => {
    const b = (await org.admin.post("/api/buckets", { name: `labels-page-${crypto.randomUUID().slice(0, 8)}` })).body as { id: string };
    const [zebra, apple] = [await createTag("page zebra"), await createTag("page apple")];
    const cat = (await org.admin.post("/api/categories", { name: `Page ${crypto.randomUUID().slice(0, 8)}` })).body as { id: string; name: string; slug: string };
    const both = await insertObject(server, org, b.id, { key: "a-both.png" });
    await insertObject(server, org, b.id, { key: "b-bare.png" });
    const one = await insertObject(server, org, b.id, { key: "c-one.png" });
    expect((await org.admin.put(`/api/objects/${both.id}/tags`, { tagIds: [zebra.id, apple.id] })).status).toBe(200);
    expect((await org.admin.put(`/api/objects/${both.id}/categories`, { categoryIds: [cat.id] })).status).toBe(200);
    expect((await org.admin.put(`/api/objects/${one.id}/tags`, { tagIds: [zebra.id] })).status).toBe(200);
    const labels = (res: { body: { data: { key: string; tags: { slug: string }[]; categories: { slug: string }[] }[] } }) =>
      Object.fromEntries(res.body.data.map((o) => [o.key, [o.tags.map((t) => t.slug), o.categories.map((c) => c.slug)]]));
    const want = { "a-both.png": [["page-apple", "page-zebra"], [cat.slug]], "b-bare.png": [[], []], "c-one.png": [["page-zebra"], []] };
    for (const order of ["asc", "desc"]) expect(labels(await org.admin.get(`/api/media?bucketId=${b.id}&sort=key&order=${order}`))).toEqual(want);
    // The organization's whole listing (the unfiltered page) holds the same objects with the same labels.
    const all = labels(await org.admin.get("/api/media?limit=200"));
    for (const [key, l] of Object.entries(want)) expect(all[key]).toEqual(l);
    expect(labels(await org.admin.get(`/api/media?bucketId=${b.id}&tags=page-zebra&sort=key&order=asc`))).toEqual({ "a-both.png": want["a-both.png"], "c-one.png": want["c-one.png"] });
  });

  test("an unknown or foreign tag id is 404 and changes nothing", async () => {
    const a = await createTag("keep me");
    const b = await createTag("also valid");
    const foreign = await createTag("foreign tag", other);
    const obj = await insertObject(server, org, bucket.id);
    await org.admin.put(`/api/objects/${obj.id}/tags`, { tagIds: [a.id] });
    for (const bad of [foreign.id, crypto.randomUUID()]) {
      const res = await org.admin.put(`/api/objects/${obj.id}/tags`, { tagIds: [b.id, bad] });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
      expect(res.body.error.details).toEqual({ missingIds: [bad] });
      expect(await tagIdsOf(obj.id)).toEqual([a.id]);
    }
    const invalid = await org.admin.put(`/api/objects/${obj.id}/tags`, { tagIds: ["nope"] });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details[0].path).toBe("tagIds.0");
    expect((await org.admin.put(`/api/objects/${obj.id}/tags`, {})).status).toBe(400);
    expect(await tagIdsOf(obj.id)).toEqual([a.id]);
  });

  test("objects of other organizations, unknown and soft-deleted objects are 404", async () => {
    const t = await createTag("object checks");
    const theirs = await insertObject(server, other, otherBucket.id);
    const gone = await insertObject(server, org, bucket.id);
    await softDeleteObject(server, gone.id);
    for (const id of [theirs.id, gone.id, crypto.randomUUID()]) {
      const res = await org.admin.put(`/api/objects/${id}/tags`, { tagIds: [t.id] });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe("Media object not found");
    }
    expect(await tagIdsOf(theirs.id)).toEqual([]);
  });

  test("objectCount counts live objects only", async () => {
    const t = await createTag("counted");
    const [o1, o2] = [await insertObject(server, org, bucket.id), await insertObject(server, org, bucket.id)];
    for (const o of [o1, o2]) await org.admin.put(`/api/objects/${o.id}/tags`, { tagIds: [t.id] });
    const count = async () => (await org.admin.get("/api/tags?search=counted")).body.data[0].objectCount;
    expect(await count()).toBe(2);
    await softDeleteObject(server, o2.id);
    expect(await count()).toBe(1);
  });

  test("delete removes the tag and its assignments; other organizations get 404", async () => {
    const t = await createTag("to delete");
    const keep = await createTag("stays");
    const obj = await insertObject(server, org, bucket.id);
    await org.admin.put(`/api/objects/${obj.id}/tags`, { tagIds: [t.id, keep.id] });
    expect((await other.admin.delete(`/api/tags/${t.id}`)).status).toBe(404);
    const res = await org.admin.delete(`/api/tags/${t.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: t.id, deleted: true, unassignedObjects: 1 });
    expect(await tagIdsOf(obj.id)).toEqual([keep.id]);
    expect((await org.admin.get("/api/tags?search=to%20delete")).body.total).toBe(0);
    expect((await org.admin.delete(`/api/tags/${t.id}`)).status).toBe(404);
    expect((await org.admin.delete("/api/tags/not-a-uuid")).status).toBe(400);
    // the slug is free again
    expect((await org.admin.post("/api/tags", { name: "To Delete" })).status).toBe(201);
  });

  test("scopes: read lists, write creates and assigns, delete deletes", async () => {
    const read = await org.keyClient(["read"]);
    const write = await org.keyClient(["write"]);
    expect((await read.get("/api/tags")).status).toBe(200);
    expect((await read.post("/api/tags", { name: "no" })).status).toBe(403);
    const t = (await write.post("/api/tags", { name: "by writer" })).body;
    expect((await write.delete(`/api/tags/${t.id}`)).status).toBe(403);
  });

  test("a bucket-restricted key: counts and assigns in its bucket only, cannot delete tags", async () => {
    const b2 = await newBucket(org);
    const key = await org.keyClient(["read", "write", "delete"], { bucketId: bucket.id });
    const t = (await key.post("/api/tags", { name: "restricted made" })).body;
    expect(t.slug).toBe("restricted-made");
    const mine = await insertObject(server, org, bucket.id);
    const notMine = await insertObject(server, org, b2.id);
    expect((await key.put(`/api/objects/${mine.id}/tags`, { tagIds: [t.id] })).status).toBe(200);
    const res = await key.put(`/api/objects/${notMine.id}/tags`, { tagIds: [t.id] });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
    await org.admin.put(`/api/objects/${notMine.id}/tags`, { tagIds: [t.id] });
    expect((await key.get("/api/tags?search=restricted-made")).body.data[0].objectCount).toBe(1);
    expect((await org.admin.get("/api/tags?search=restricted-made")).body.data[0].objectCount).toBe(2);
    expect((await key.delete(`/api/tags/${t.id}`)).status).toBe(403);
    // Deleting tags is organization-wide: refused before any lookup, whatever the id.
    expect((await key.delete(`/api/tags/${crypto.randomUUID()}`)).status).toBe(403);
    expect((await org.admin.get("/api/tags?search=restricted-made")).body.total).toBe(1);
  });
});

describe("tags for the upload flow (domain)", () => {
  test("ensureTagsByName creates missing tags once, matches by slug, keeps first-seen order", async () => {
    const { db } = server.services.deps;
    const existing = await createTag("Already Here");
    const ids = await db.transaction((tx) => ensureTagsByName(tx, org.orgId, ["brand new", "already-here", "Brand New", "Zebra"]));
    expect(ids).toHaveLength(3);
    expect(ids[1]).toBe(existing.id);
    const rows = await db.select().from(tags).where(eq(tags.orgId, org.orgId));
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(ids[0]!)).toMatchObject({ name: "brand new", slug: "brand-new" });
    expect(byId.get(ids[2]!)).toMatchObject({ name: "Zebra", slug: "zebra" });
    expect(byId.get(existing.id)!.name).toBe("Already Here");
    await expect(db.transaction((tx) => ensureTagsByName(tx, org.orgId, ["ok", "###"]))).rejects.toMatchObject({ code: "validation_error" });
    expect(await db.transaction((tx) => ensureTagsByName(tx, org.orgId, []))).toEqual([]);
  });

  test("ensureTagsByName is safe when many uploads name the same new tags at once", async () => {
    const { db } = server.services.deps;
    const o = await newOrg(server, "ensure race");
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => db.transaction((tx) => ensureTagsByName(tx, o.orgId, i % 2 ? ["race a", "race b"] : ["Race B", "race c", "race a"]))),
    );
    const rows = await db.select().from(tags).where(eq(tags.orgId, o.orgId));
    expect(rows.map((r) => r.slug).sort()).toEqual(["race-a", "race-b", "race-c"]);
    const idOf = new Map(rows.map((r) => [r.slug, r.id]));
    for (const [i, ids] of results.entries()) {
      const expected = i % 2 ? ["race-a", "race-b"] : ["race-b", "race-c", "race-a"];
      expect(ids).toEqual(expected.map((slug) => idOf.get(slug)!));
    }
  });

  test("replaceObjectLabels and labelsFor", async () => {
    const { db } = server.services.deps;
    const [o1, o2, o3] = [await insertObject(server, org, bucket.id), await insertObject(server, org, bucket.id), await insertObject(server, org, bucket.id)];
    const cat = (await org.admin.post("/api/categories", { name: "labels cat" })).body;
    await db.transaction(async (tx) => {
      const ids = await ensureTagsByName(tx, org.orgId, ["label b", "label a"]);
      await replaceObjectLabels(tx, tagKind, org.orgId, o1.id, ids);
      await replaceObjectLabels(tx, tagKind, org.orgId, o2.id, [ids[0]!]);
    });
    await org.admin.put(`/api/objects/${o2.id}/categories`, { categoryIds: [cat.id] });
    const labels = await labelsFor(db, org.orgId, [o1.id, o2.id, o3.id]);
    expect(labels.get(o1.id)!.tags.map((t) => t.slug)).toEqual(["label-a", "label-b"]);
    expect(labels.get(o2.id)).toEqual({ tags: [expect.objectContaining({ slug: "label-b" })], categories: [{ id: cat.id, name: "labels cat", slug: "labels-cat" }] });
    expect(labels.get(o3.id)).toEqual({ tags: [], categories: [] });
    // another organization's view of the same ids is empty
    expect((await labelsFor(db, other.orgId, [o1.id])).get(o1.id)).toEqual({ tags: [], categories: [] });
    const foreign = await createTag("not yours", other);
    await expect(db.transaction((tx) => replaceObjectLabels(tx, tagKind, org.orgId, o1.id, [foreign.id]))).rejects.toMatchObject({ code: "not_found" });
    expect((await labelsFor(db, org.orgId, [o1.id])).get(o1.id)!.tags).toHaveLength(2);
  });
});

/**
 * A view reads its labels from the object's row (media_objects.labels), not from the links:
 * every change of the links must rewrite it in the same transaction.
 */
describe("a view's labels follow its links", () => {
  /** Every object of the organization, in the trash too: the labels its row holds are those its links give. */
  const rowsMatchLinks = async () => {
    const { db } = server.services.deps;
    const rows = await db.select({ id: mediaObjects.id, labels: mediaObjects.labels }).from(mediaObjects).where(eq(mediaObjects.orgId, org.orgId));
    const fromLinks = await labelsFor(db, org.orgId, rows.map((r) => r.id));
    for (const r of rows) expect({ id: r.id, ...r.labels }).toEqual({ id: r.id, ...fromLinks.get(r.id)! });
  };
  const slugsOf = (view: { tags: { slug: string }[]; categories: { slug: string }[] }) => [view.tags.map((t) => t.slug), view.categories.map((c) => c.slug)];

  test("set, a tag deleted, a category deleted: in get, list, search and the trash", async () => {
    const b = await newBucket(org, "follow");
    const [gone, stays] = [await createTag("follow gone"), await createTag("follow stays")];
    const cat = (await org.admin.post("/api/categories", { name: `Follow ${crypto.randomUUID().slice(0, 8)}` })).body as { id: string; slug: string };
    const live = await insertObject(server, org, b.id, { key: "zqfollow-live.png" });
    const trashed = await insertObject(server, org, b.id, { key: "zqfollow-trashed.png" });
    for (const o of [live, trashed]) {
      expect((await org.admin.put(`/api/objects/${o.id}/tags`, { tagIds: [stays.id, gone.id] })).status).toBe(200);
      expect((await org.admin.put(`/api/objects/${o.id}/categories`, { categoryIds: [cat.id] })).status).toBe(200);
    }
    expect(slugsOf((await org.admin.get(`/api/media/${live.id}`)).body)).toEqual([["follow-gone", "follow-stays"], [cat.slug]]);
    await softDeleteObject(server, trashed.id);

    expect((await org.admin.delete(`/api/tags/${gone.id}`)).body.unassignedObjects).toBe(2);
    expect((await org.admin.delete(`/api/categories/${cat.id}`)).status).toBe(200);
    const want = [["follow-stays"], []];
    expect(slugsOf((await org.admin.get(`/api/media/${live.id}`)).body)).toEqual(want);
    expect((await org.admin.get(`/api/media?bucketId=${b.id}`)).body.data.map(slugsOf)).toEqual([want]);
    expect((await org.admin.get("/api/media?limit=200")).body.data.filter((o: { id: string }) => o.id === live.id).map(slugsOf)).toEqual([want]);
    expect((await org.admin.get("/api/search?q=zqfollow")).body.media.map(slugsOf)).toEqual([want]);
    expect((await org.admin.get("/api/trash?limit=200")).body.data.filter((o: { id: string }) => o.id === trashed.id).map(slugsOf)).toEqual([want]);
    // Restored, it carries what its links say.
    expect(slugsOf((await org.admin.post(`/api/trash/${trashed.id}/restore`)).body)).toEqual(want);
    await rowsMatchLinks();
  });

  test("labels given at upload are in the confirm's answer and in every view after it", async () => {
    const b = await newBucket(org, "upload-labels");
    const presigned = await org.admin.post("/api/presign/upload", { bucketId: b.id, key: "labelled.txt", contentType: "text/plain", size: 2, tags: ["Follow Upload", "another"] });
    expect((await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body: "hi" })).status).toBe(200);
    const confirmed = await org.admin.post("/api/presign/confirm", { bucketId: b.id, key: "labelled.txt" });
    expect(slugsOf(confirmed.body)).toEqual([["another", "follow-upload"], []]);
    expect(slugsOf((await org.admin.get(`/api/media/${confirmed.body.id}`)).body)).toEqual([["another", "follow-upload"], []]);
    await rowsMatchLinks();
  });

  test("a tag deleted while its objects' tags are being set: every call answers, and every row matches its links", async () => {
    const b = await newBucket(org, "race");
    const [doomed, kept, added] = [await createTag("race doomed"), await createTag("race kept"), await createTag("race added")];
    const objects = await Promise.all(Array.from({ length: 12 }, (_, i) => insertObject(server, org, b.id, { key: `race-${i}.png` })));
    for (const o of objects) expect((await org.admin.put(`/api/objects/${o.id}/tags`, { tagIds: [doomed.id, kept.id] })).status).toBe(200);
    // Each PUT locks its object and takes the doomed tag off it, while the delete takes the tag
    // off every object: the two lock the same rows, and must not wait on each other in a cycle.
    const [deleted, ...sets] = await Promise.all([
      org.admin.delete(`/api/tags/${doomed.id}`),
      ...objects.map((o) => org.admin.put(`/api/objects/${o.id}/tags`, { tagIds: [kept.id, added.id] })),
    ]);
    expect(deleted.status).toBe(200);
    expect(sets.map((r) => r.status)).toEqual(objects.map(() => 200));
    for (const o of objects) expect(slugsOf((await org.admin.get(`/api/media/${o.id}`)).body)).toEqual([["race-added", "race-kept"], []]);
    await rowsMatchLinks();
  });
});
