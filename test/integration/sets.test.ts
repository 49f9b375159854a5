import { describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { jobOutbox, mediaObjects } from "../../db/schema/index.ts";
import { insertObject, type MediaRow, newBucket, softDeleteObject } from "../support/objects.ts";
import { withTwoOrgs } from "../support/fixtures.ts";
import { newOrg, type TestOrg, type TestServer } from "../support/server.ts";

let server: TestServer;
let org: TestOrg;
let other: TestOrg;
let bucket: { id: string };
let otherBucket: { id: string };

withTwoOrgs({ ready: (made) => void ({ server, org, other, bucket, otherBucket } = made) });

const uuid = expect.stringMatching(/^[0-9a-f-]{36}$/);
const item = { aspectRatio: "16:9", width: 1920, height: 1080, role: "hero" };

async function newSet(who: TestOrg = org, bucketId = bucket.id, name = "Campaign"): Promise<{ id: string; base: MediaRow }> {
  const base = await insertObject(server, who, bucketId);
  const res = await who.admin.post("/api/sets", { name, baseObjectId: base.id });
  expect(res.status).toBe(201);
  return { id: res.body.id, base };
}

describe("sets", () => {
  test("create answers 201 with the set and no items", async () => {
    const base = await insertObject(server, org, bucket.id);
    const res = await org.admin.post("/api/sets", { name: "  Spring launch ", baseObjectId: base.id });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: uuid,
      name: "Spring launch",
      bucketId: bucket.id,
      baseObjectId: base.id,
      baseObjectDeleted: false,
      itemCount: 0,
      generateRequestedAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      items: [],
    });
    expect((await org.admin.get(`/api/sets/${res.body.id}`)).body).toEqual(res.body);
  });

  test("the base object must be a live object of the organization (404 otherwise); input is validated", async () => {
    const theirs = await insertObject(server, other, otherBucket.id);
    const gone = await insertObject(server, org, bucket.id);
    await softDeleteObject(server, gone.id);
    for (const baseObjectId of [theirs.id, gone.id, crypto.randomUUID()]) {
      const res = await org.admin.post("/api/sets", { name: "x", baseObjectId });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe("Base object not found");
    }
    const base = await insertObject(server, org, bucket.id);
    for (const body of [{ name: "", baseObjectId: base.id }, { name: "x" }, { name: "x", baseObjectId: "nope" }, { name: "x".repeat(201), baseObjectId: base.id }]) {
      expect((await org.admin.post("/api/sets", body)).status).toBe(400);
    }
  });

  test("items: generated (no objectId) and attached; get shows them in order", async () => {
    const s = await newSet();
    const gen = await org.admin.post(`/api/sets/${s.id}/items`, { ...item, role: "thumbnail", aspectRatio: "1:1", width: 256, height: 256 });
    expect(gen.status).toBe(201);
    expect(gen.body).toEqual({
      id: uuid,
      setId: s.id,
      objectId: null,
      objectDeleted: false,
      source: "generated",
      aspectRatio: "1:1",
      width: 256,
      height: 256,
      role: "thumbnail",
      renderError: null,
      createdAt: expect.any(String),
    });
    const rendition = await insertObject(server, org, bucket.id);
    const att = await org.admin.post(`/api/sets/${s.id}/items`, { ...item, objectId: rendition.id });
    expect(att.status).toBe(201);
    expect(att.body).toMatchObject({ objectId: rendition.id, source: "attached", role: "hero", width: 1920, height: 1080 });
    const got = await org.admin.get(`/api/sets/${s.id}`);
    expect(got.body.itemCount).toBe(2);
    expect(got.body.items.map((i: { id: string }) => i.id)).toEqual([gen.body.id, att.body.id]);
    expect(got.body.items[0]).toEqual(gen.body);
  });

  test("item validation: aspect ratio W:H of positive integers, sizes, matching ratio, role", async () => {
    const s = await newSet();
    const bad: [Record<string, unknown>, string][] = [
      [{ aspectRatio: "16x9" }, "aspectRatio"],
      [{ aspectRatio: "0:9" }, "aspectRatio"],
      [{ aspectRatio: "16:0" }, "aspectRatio"],
      [{ aspectRatio: "-16:9" }, "aspectRatio"],
      [{ aspectRatio: "1.5:1" }, "aspectRatio"],
      [{ aspectRatio: "016:9" }, "aspectRatio"],
      [{ width: 0 }, "width"],
      [{ width: 16385 }, "width"],
      [{ width: 19.5 }, "width"],
      [{ height: -1 }, "height"],
      [{ height: 1000 }, "height"],
      [{ role: "" }, "role"],
      [{ role: "r".repeat(65) }, "role"],
      [{ objectId: "nope" }, "objectId"],
      [{ extra: true }, ""],
    ];
    for (const [patch, path] of bad) {
      const res = await org.admin.post(`/api/sets/${s.id}/items`, { ...item, ...patch });
      expect(`${JSON.stringify(patch)} ${res.status}`).toBe(`${JSON.stringify(patch)} 400`);
      expect(res.body.error.code).toBe("validation_error");
      if (path) expect(res.body.error.details[0].path).toBe(path);
    }
    for (const { aspectRatio, width, height } of [
      { aspectRatio: "21:9", width: 2560, height: 1080 },
      { aspectRatio: "16:9", width: 1366, height: 768 },
      { aspectRatio: "4:5", width: 1080, height: 1350 },
    ]) {
      expect((await org.admin.post(`/api/sets/${s.id}/items`, { ...item, aspectRatio, width, height })).status).toBe(201);
    }
    const missing = await org.admin.post(`/api/sets/${s.id}/items`, { aspectRatio: "1:1" });
    expect(missing.status).toBe(400);
    expect((await org.admin.get(`/api/sets/${s.id}`)).body.itemCount).toBe(3);
  });

  test("an item's object must be live, in the organization, and in the set's bucket", async () => {
    const s = await newSet();
    const theirs = await insertObject(server, other, otherBucket.id);
    const gone = await insertObject(server, org, bucket.id);
    await softDeleteObject(server, gone.id);
    for (const objectId of [theirs.id, gone.id, crypto.randomUUID()]) {
      expect((await org.admin.post(`/api/sets/${s.id}/items`, { ...item, objectId })).status).toBe(404);
    }
    const b2 = await newBucket(org);
    const elsewhere = await insertObject(server, org, b2.id);
    const res = await org.admin.post(`/api/sets/${s.id}/items`, { ...item, objectId: elsewhere.id });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toBe("objectId");
    expect((await org.admin.get(`/api/sets/${s.id}`)).body.items).toEqual([]);
  });

  test("remove an item; items of other sets and organizations are 404", async () => {
    const s = await newSet();
    const s2 = await newSet();
    const a = (await org.admin.post(`/api/sets/${s.id}/items`, item)).body;
    const b = (await org.admin.post(`/api/sets/${s.id}/items`, item)).body;
    expect((await org.admin.delete(`/api/sets/${s2.id}/items/${a.id}`)).status).toBe(404);
    expect((await other.admin.delete(`/api/sets/${s.id}/items/${a.id}`)).status).toBe(404);
    const res = await org.admin.delete(`/api/sets/${s.id}/items/${a.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: a.id, deleted: true });
    expect((await org.admin.get(`/api/sets/${s.id}`)).body.items.map((i: { id: string }) => i.id)).toEqual([b.id]);
    const again = await org.admin.delete(`/api/sets/${s.id}/items/${a.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error.message).toBe("Set item not found");
  });

  test("generate answers exactly 202 and records a sets.generate job in the outbox", async () => {
    const s = await newSet();
    await org.admin.post(`/api/sets/${s.id}/items`, item);
    await org.admin.post(`/api/sets/${s.id}/items`, { ...item, role: "thumb", aspectRatio: "1:1", width: 200, height: 200 });
    await org.admin.post(`/api/sets/${s.id}/items`, { ...item, objectId: (await insertObject(server, org, bucket.id)).id });
    const res = await org.admin.post(`/api/sets/${s.id}/generate`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ setId: s.id, jobId: uuid, status: "queued", items: 2 });
    const [job] = await server.services.deps.db.select().from(jobOutbox).where(eq(jobOutbox.id, res.body.jobId));
    expect(job).toMatchObject({ name: "sets.generate", payload: { orgId: org.orgId, setId: s.id } });
    const got = (await org.admin.get(`/api/sets/${s.id}`)).body;
    expect(got.generateRequestedAt).toEqual(expect.any(String));
    // every call is a new job
    const again = await org.admin.post(`/api/sets/${s.id}/generate`, {});
    expect(again.status).toBe(202);
    expect(again.body.jobId).not.toBe(res.body.jobId);
    const jobs = await server.services.deps.db
      .select()
      .from(jobOutbox)
      .where(sql`${jobOutbox.name} = 'sets.generate' and ${jobOutbox.payload}->>'setId' = ${s.id}`);
    expect(jobs).toHaveLength(2);
    expect((await org.admin.post(`/api/sets/${s.id}/generate`, { force: true })).status).toBe(400);
  });

  test("soft-deleted objects are marked, not dropped; generate without a live base is 409", async () => {
    const s = await newSet();
    const rendition = await insertObject(server, org, bucket.id);
    const att = (await org.admin.post(`/api/sets/${s.id}/items`, { ...item, objectId: rendition.id })).body;
    await softDeleteObject(server, rendition.id);
    const got = (await org.admin.get(`/api/sets/${s.id}`)).body;
    expect(got.items).toEqual([{ ...att, objectDeleted: true }]);
    expect(got.baseObjectDeleted).toBe(false);
    await softDeleteObject(server, s.base.id);
    expect((await org.admin.get(`/api/sets/${s.id}`)).body.baseObjectDeleted).toBe(true);
    const listed = (await org.admin.get("/api/sets?limit=200")).body.data.find((x: { id: string }) => x.id === s.id);
    expect(listed).toMatchObject({ baseObjectDeleted: true, itemCount: 1 });
    const gen = await org.admin.post(`/api/sets/${s.id}/generate`);
    expect(gen.status).toBe(409);
    expect(gen.body.error.code).toBe("conflict");
  });

  test("a purged attached object leaves its item to be rendered by generate; a purged base takes the set along", async () => {
    const s = await newSet();
    const rendition = await insertObject(server, org, bucket.id);
    const att = (await org.admin.post(`/api/sets/${s.id}/items`, { ...item, objectId: rendition.id })).body;
    await server.services.deps.db.delete(mediaObjects).where(eq(mediaObjects.id, rendition.id));
    expect((await org.admin.get(`/api/sets/${s.id}`)).body.items).toEqual([{ ...att, objectId: null }]);
    expect((await org.admin.post(`/api/sets/${s.id}/generate`)).body.items).toBe(1);
    await server.services.deps.db.delete(mediaObjects).where(eq(mediaObjects.id, s.base.id));
    expect((await org.admin.get(`/api/sets/${s.id}`)).status).toBe(404);
  });

  test("list: summaries newest first with item counts, paginated, only this organization", async () => {
    const o = await newOrg(server, "list");
    const ob = await newBucket(o);
    const ids: string[] = [];
    for (const n of ["one", "two", "three"]) ids.push((await newSet(o, ob.id, n)).id);
    await o.admin.post(`/api/sets/${ids[0]}/items`, item);
    const all = await o.admin.get("/api/sets");
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect(all.body.data.map((x: { name: string }) => x.name)).toEqual(["three", "two", "one"]);
    expect(all.body.data[2]).toMatchObject({ id: ids[0], itemCount: 1, bucketId: ob.id });
    expect(all.body.data[2].items).toBeUndefined();
    const p = await o.admin.get("/api/sets?limit=2&offset=2");
    expect(p.body).toMatchObject({ total: 3, hasMore: false });
    expect(p.body.data).toHaveLength(1);
    expect((await o.admin.get("/api/sets?limit=2")).body.hasMore).toBe(true);
    expect((await other.admin.get("/api/sets")).body.data.some((x: { id: string }) => ids.includes(x.id))).toBe(false);
  });

  test("every set endpoint answers 404 for another organization's set", async () => {
    const s = await newSet();
    const it = (await org.admin.post(`/api/sets/${s.id}/items`, item)).body;
    const theirs = await insertObject(server, other, otherBucket.id);
    const calls = [
      other.admin.get(`/api/sets/${s.id}`),
      other.admin.post(`/api/sets/${s.id}/items`, { ...item, objectId: theirs.id }),
      other.admin.post(`/api/sets/${s.id}/items`, item),
      other.admin.delete(`/api/sets/${s.id}/items/${it.id}`),
      other.admin.post(`/api/sets/${s.id}/generate`),
      other.admin.delete(`/api/sets/${s.id}`),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe("Set not found");
    }
    expect((await org.admin.get(`/api/sets/${s.id}`)).body.items).toHaveLength(1);
  });

  test("delete removes the set and its items, keeps the objects", async () => {
    const s = await newSet();
    const rendition = await insertObject(server, org, bucket.id);
    await org.admin.post(`/api/sets/${s.id}/items`, { ...item, objectId: rendition.id });
    const res = await org.admin.delete(`/api/sets/${s.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: s.id, deleted: true });
    expect((await org.admin.get(`/api/sets/${s.id}`)).status).toBe(404);
    expect((await org.admin.delete(`/api/sets/${s.id}`)).status).toBe(404);
    // the objects are still usable
    expect((await org.admin.post("/api/sets", { name: "again", baseObjectId: rendition.id })).status).toBe(201);
  });

  test("a bucket-restricted key works only on sets of its bucket", async () => {
    const o = await newOrg(server, "restricted");
    const [b1, b2] = [await newBucket(o), await newBucket(o)];
    const key = await o.keyClient(["read", "write", "delete"], { bucketId: b1.id });
    const mine = await newSet(o, b1.id, "mine");
    const notMine = await newSet(o, b2.id, "not mine");
    const list = await key.get("/api/sets");
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([mine.id]);
    expect(list.body.total).toBe(1);
    expect((await key.get(`/api/sets/${mine.id}`)).status).toBe(200);
    for (const res of [
      await key.get(`/api/sets/${notMine.id}`),
      await key.post(`/api/sets/${notMine.id}/items`, item),
      await key.post(`/api/sets/${notMine.id}/generate`),
      await key.delete(`/api/sets/${notMine.id}`),
      await key.post("/api/sets", { name: "x", baseObjectId: notMine.base.id }),
      await key.post(`/api/sets/${mine.id}/items`, { ...item, objectId: (await insertObject(server, o, b2.id)).id }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    expect((await key.post("/api/sets", { name: "x", baseObjectId: (await insertObject(server, o, b1.id)).id })).status).toBe(201);
    expect((await key.post(`/api/sets/${mine.id}/items`, item)).status).toBe(201);
    expect((await key.post(`/api/sets/${mine.id}/generate`)).status).toBe(202);
  });
});
