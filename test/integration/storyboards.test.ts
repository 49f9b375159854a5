import { describe, expect, test } from "bun:test";
import { asc, eq } from "drizzle-orm";
import { mediaObjects, storyboardClips } from "../../db/schema/index.ts";
import { insertObject, newBucket, softDeleteObject } from "../support/objects.ts";
import { withTwoOrgs } from "../support/fixtures.ts";
import { newOrg, type TestOrg, type TestServer } from "../support/server.ts";

let server: TestServer;
let org: TestOrg;
let other: TestOrg;
let bucket: { id: string };
let otherBucket: { id: string };

withTwoOrgs({ ready: (made) => void ({ server, org, other, bucket, otherBucket } = made) });

const uuid = expect.stringMatching(/^[0-9a-f-]{36}$/);

interface Clip {
  id: string;
  storyboardId: string;
  objectId: string;
  createdAt: string;
  position: number;
  note: string;
  objectDeleted: boolean;
}

async function newStoryboard(who: TestOrg = org, body: Record<string, unknown> = {}): Promise<string> {
  const res = await who.admin.post("/api/storyboards", { name: "Cut", ...body });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function addClips(sb: string, n: number, who: TestOrg = org, bucketId = bucket.id): Promise<Clip[]> {
  const out: Clip[] = [];
  for (let i = 0; i < n; i++) {
    const obj = await insertObject(server, who, bucketId);
    const res = await who.admin.post(`/api/storyboards/${sb}/clips`, { objectId: obj.id, note: `clip ${i}` });
    expect(res.status).toBe(201);
    out.push(res.body);
  }
  return out;
}

const clipsOf = async (sb: string, who: TestOrg = org): Promise<Clip[]> => (await who.admin.get(`/api/storyboards/${sb}`)).body.clips;
const order = async (sb: string) => (await clipsOf(sb)).map((c) => c.id);

/** What is stored, not what the view computes: positions must be exactly 0..n-1. */
async function storedPositions(sb: string): Promise<number[]> {
  const rows = await server.services.deps.db
    .select({ position: storyboardClips.position })
    .from(storyboardClips)
    .where(eq(storyboardClips.storyboardId, sb))
    .orderBy(asc(storyboardClips.position));
  return rows.map((r) => r.position);
}
const dense = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("storyboards", () => {
  test("create, get, list and delete", async () => {
    const o = await newOrg(server, "crud");
    const res = await o.admin.post("/api/storyboards", { name: " Teaser " });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: uuid,
      name: "Teaser",
      bucketId: null,
      clipCount: 0,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      clips: [],
    });
    expect((await o.admin.get(`/api/storyboards/${res.body.id}`)).body).toEqual(res.body);
    await o.admin.post("/api/storyboards", { name: "Second" });
    const list = await o.admin.get("/api/storyboards?limit=1");
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 2, hasMore: true });
    expect(list.body.data[0]).toMatchObject({ name: "Second", clipCount: 0 });
    expect(list.body.data[0].clips).toBeUndefined();
    expect((await other.admin.get("/api/storyboards")).body.data.some((s: { id: string }) => s.id === res.body.id)).toBe(false);
    const del = await o.admin.delete(`/api/storyboards/${res.body.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: res.body.id, deleted: true });
    expect((await o.admin.get(`/api/storyboards/${res.body.id}`)).status).toBe(404);
    for (const body of [{}, { name: "" }, { name: "x".repeat(201) }, { name: "x", bucketId: "nope" }]) {
      expect((await o.admin.post("/api/storyboards", body)).status).toBe(400);
    }
  });

  test("add clips: append by default, insert at a position shifts the rest, past the end is 400", async () => {
    const sb = await newStoryboard();
    const [a, b] = await addClips(sb, 2);
    expect(a).toEqual({ id: uuid, storyboardId: sb, objectId: expect.any(String), position: 0, note: "clip 0", objectDeleted: false, createdAt: expect.any(String) });
    expect(b!.position).toBe(1);
    const obj = await insertObject(server, org, bucket.id);
    const first = await org.admin.post(`/api/storyboards/${sb}/clips`, { objectId: obj.id, position: 0 });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ position: 0, note: "" });
    const mid = await org.admin.post(`/api/storyboards/${sb}/clips`, { objectId: obj.id, position: 2, note: "same object again" });
    expect(mid.body.position).toBe(2);
    const end = await org.admin.post(`/api/storyboards/${sb}/clips`, { objectId: obj.id, position: 4 });
    expect(end.body.position).toBe(4);
    expect(await order(sb)).toEqual([first.body.id, a!.id, mid.body.id, b!.id, end.body.id]);
    expect((await clipsOf(sb)).map((c) => c.position)).toEqual(dense(5));
    for (const position of [6, 100]) {
      const res = await org.admin.post(`/api/storyboards/${sb}/clips`, { objectId: obj.id, position });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].path).toBe("position");
    }
    for (const body of [{ objectId: obj.id, position: -1 }, { objectId: obj.id, position: 1.5 }, { position: 0 }, { objectId: obj.id, note: "n".repeat(2001) }]) {
      expect((await org.admin.post(`/api/storyboards/${sb}/clips`, body)).status).toBe(400);
    }
    expect(await storedPositions(sb)).toEqual(dense(5));
    expect((await org.admin.get(`/api/storyboards/${sb}`)).body.clipCount).toBe(5);
  });

  test("a clip's object must be a live object of the organization", async () => {
    const sb = await newStoryboard();
    const theirs = await insertObject(server, other, otherBucket.id);
    const gone = await insertObject(server, org, bucket.id);
    await softDeleteObject(server, gone.id);
    for (const objectId of [theirs.id, gone.id, crypto.randomUUID()]) {
      const res = await org.admin.post(`/api/storyboards/${sb}/clips`, { objectId });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe("Media object not found");
    }
    expect(await clipsOf(sb)).toEqual([]);
  });

  test("update: moving a clip shifts the ones in between; note alone; out of range is 400", async () => {
    const sb = await newStoryboard();
    const [a, b, c, d] = await addClips(sb, 4);
    const down = await org.admin.put(`/api/storyboards/${sb}/clips/${a!.id}`, { position: 2 });
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({ id: a!.id, position: 2, note: "clip 0" });
    expect(await order(sb)).toEqual([b!.id, c!.id, a!.id, d!.id]);
    const up = await org.admin.put(`/api/storyboards/${sb}/clips/${d!.id}`, { position: 0, note: "opening" });
    expect(up.body).toMatchObject({ position: 0, note: "opening" });
    expect(await order(sb)).toEqual([d!.id, b!.id, c!.id, a!.id]);
    const noteOnly = await org.admin.put(`/api/storyboards/${sb}/clips/${c!.id}`, { note: "" });
    expect(noteOnly.body).toMatchObject({ position: 2, note: "" });
    const same = await org.admin.put(`/api/storyboards/${sb}/clips/${c!.id}`, { position: 2 });
    expect(same.body.position).toBe(2);
    for (const body of [{ position: 4 }, { position: -1 }, {}, { position: "1" }]) {
      const res = await org.admin.put(`/api/storyboards/${sb}/clips/${c!.id}`, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
    expect(await order(sb)).toEqual([d!.id, b!.id, c!.id, a!.id]);
    expect(await storedPositions(sb)).toEqual(dense(4));
  });

  test("remove closes the gap", async () => {
    const sb = await newStoryboard();
    const [a, b, c, d] = await addClips(sb, 4);
    const res = await org.admin.delete(`/api/storyboards/${sb}/clips/${b!.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: b!.id, deleted: true });
    const clips = await clipsOf(sb);
    expect(clips.map((x) => [x.id, x.position])).toEqual([
      [a!.id, 0],
      [c!.id, 1],
      [d!.id, 2],
    ]);
    expect(await storedPositions(sb)).toEqual(dense(3));
    expect((await org.admin.delete(`/api/storyboards/${sb}/clips/${b!.id}`)).status).toBe(404);
    await org.admin.delete(`/api/storyboards/${sb}/clips/${d!.id}`);
    await org.admin.delete(`/api/storyboards/${sb}/clips/${a!.id}`);
    expect((await clipsOf(sb)).map((x) => [x.id, x.position])).toEqual([[c!.id, 0]]);
  });

  test("reorder takes the complete list and answers the reordered storyboard", async () => {
    const sb = await newStoryboard();
    const [a, b, c] = await addClips(sb, 3);
    const res = await org.admin.put(`/api/storyboards/${sb}/clips/reorder`, { clipIds: [c!.id, a!.id, b!.id] });
    expect(res.status).toBe(200);
    expect(res.body.clips.map((x: Clip) => [x.id, x.position])).toEqual([
      [c!.id, 0],
      [a!.id, 1],
      [b!.id, 2],
    ]);
    expect(res.body.clipCount).toBe(3);
    expect(await order(sb)).toEqual([c!.id, a!.id, b!.id]);
    expect(await storedPositions(sb)).toEqual(dense(3));
    const empty = await newStoryboard();
    expect((await org.admin.put(`/api/storyboards/${empty}/clips/reorder`, { clipIds: [] })).status).toBe(200);
  });

  test("reorder with a foreign, missing, duplicated or unknown id is 400 and changes nothing", async () => {
    const sb = await newStoryboard();
    const [a, b, c] = await addClips(sb, 3);
    const sb2 = await newStoryboard();
    const [x] = await addClips(sb2, 1);
    const theirSb = await newStoryboard(other);
    const [theirs] = await addClips(theirSb, 1, other, otherBucket.id);
    const before = await order(sb);
    const cases: [string[], string][] = [
      [[a!.id, b!.id, c!.id, x!.id], "clipIds.3"],
      [[a!.id, b!.id, theirs!.id], "clipIds.2"],
      [[a!.id, b!.id], "clipIds"],
      [[a!.id, b!.id, b!.id], "clipIds.2"],
      [[a!.id, b!.id, c!.id, c!.id], "clipIds.3"],
      [[crypto.randomUUID(), b!.id, c!.id], "clipIds.0"],
      [[], "clipIds"],
    ];
    for (const [clipIds, path] of cases) {
      const res = await org.admin.put(`/api/storyboards/${sb}/clips/reorder`, { clipIds });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
      expect(await order(sb)).toEqual(before);
    }
    for (const body of [{}, { clipIds: "x" }, { clipIds: ["nope"] }]) {
      expect((await org.admin.put(`/api/storyboards/${sb}/clips/reorder`, body)).status).toBe(400);
    }
    expect(await order(sb)).toEqual(before);
    expect(await order(sb2)).toEqual([x!.id]);
    expect(await storedPositions(sb)).toEqual(dense(3));
  });

  test("every storyboard and clip endpoint answers 404 for other organizations' ids", async () => {
    const sb = await newStoryboard();
    const [a] = await addClips(sb, 1);
    const theirObj = await insertObject(server, other, otherBucket.id);
    const calls = [
      other.admin.get(`/api/storyboards/${sb}`),
      other.admin.delete(`/api/storyboards/${sb}`),
      other.admin.post(`/api/storyboards/${sb}/clips`, { objectId: theirObj.id }),
      other.admin.put(`/api/storyboards/${sb}/clips/reorder`, { clipIds: [a!.id] }),
      other.admin.put(`/api/storyboards/${sb}/clips/${a!.id}`, { note: "x" }),
      other.admin.delete(`/api/storyboards/${sb}/clips/${a!.id}`),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe("Storyboard not found");
    }
    // a clip id of another storyboard (or organization) under my storyboard
    const theirSb = await newStoryboard(other);
    const [theirClip] = await addClips(theirSb, 1, other, otherBucket.id);
    const mine2 = await newStoryboard();
    const [other2] = await addClips(mine2, 1);
    for (const clipId of [theirClip!.id, other2!.id, crypto.randomUUID()]) {
      const upd = await org.admin.put(`/api/storyboards/${sb}/clips/${clipId}`, { note: "x" });
      expect(upd.status).toBe(404);
      expect(upd.body.error.message).toBe("Clip not found");
      expect((await org.admin.delete(`/api/storyboards/${sb}/clips/${clipId}`)).status).toBe(404);
    }
    expect(await clipsOf(sb)).toEqual([expect.objectContaining({ id: a!.id, note: "clip 0" })]);
    expect((await clipsOf(theirSb, other))[0]!.note).toBe("clip 0");
  });

  test("soft-deleted objects stay in place, marked objectDeleted", async () => {
    const sb = await newStoryboard();
    const [a, b, c] = await addClips(sb, 3);
    await softDeleteObject(server, b!.objectId);
    const clips = await clipsOf(sb);
    expect(clips.map((x) => [x.id, x.position, x.objectDeleted])).toEqual([
      [a!.id, 0, false],
      [b!.id, 1, true],
      [c!.id, 2, false],
    ]);
    // it can still be moved and removed like any clip
    expect((await org.admin.put(`/api/storyboards/${sb}/clips/reorder`, { clipIds: [b!.id, c!.id, a!.id] })).status).toBe(200);
    expect((await org.admin.delete(`/api/storyboards/${sb}/clips/${b!.id}`)).status).toBe(200);
    expect(await order(sb)).toEqual([c!.id, a!.id]);
  });

  test("a purged object takes its clip along; the view stays dense and the next change closes the gap", async () => {
    const sb = await newStoryboard();
    const [a, b, c] = await addClips(sb, 3);
    await server.services.deps.db.delete(mediaObjects).where(eq(mediaObjects.id, b!.objectId));
    expect((await clipsOf(sb)).map((x) => [x.id, x.position])).toEqual([
      [a!.id, 0],
      [c!.id, 1],
    ]);
    expect(await storedPositions(sb)).toEqual([0, 2]);
    await org.admin.put(`/api/storyboards/${sb}/clips/${a!.id}`, { note: "touch" });
    await org.admin.put(`/api/storyboards/${sb}/clips/reorder`, { clipIds: [a!.id, c!.id] });
    expect(await storedPositions(sb)).toEqual([0, 1]);
  });

  test("concurrent inserts, moves, removals and reorders never corrupt positions", async () => {
    const sb = await newStoryboard();
    const initial = await addClips(sb, 10);
    const objects = await Promise.all(Array.from({ length: 20 }, () => insertObject(server, org, bucket.id)));
    // 20 parallel inserts at assorted positions
    const inserts = await Promise.all(
      objects.map((o, i) => org.admin.post(`/api/storyboards/${sb}/clips`, { objectId: o.id, position: (i * 7) % 11 })),
    );
    expect(inserts.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(await storedPositions(sb)).toEqual(dense(30));
    // 20 parallel reorders, each a different permutation of all clips
    const ids = await order(sb);
    const perms = Array.from({ length: 20 }, (_, k) => [...ids.slice(k), ...ids.slice(0, k)].reverse());
    const reorders = await Promise.all(perms.map((clipIds) => org.admin.put(`/api/storyboards/${sb}/clips/reorder`, { clipIds })));
    expect(reorders.map((r) => r.status)).toEqual(Array(20).fill(200));
    const after = await order(sb);
    expect(perms.some((p) => p.join() === after.join())).toBe(true);
    expect(await storedPositions(sb)).toEqual(dense(30));
    // a mix: moves, removals, inserts and reorders together; a reorder may lose the race to a
    // change of the clip set (then it is 400 by design), but positions must stay dense
    const mixed = await Promise.all([
      ...initial.slice(0, 5).map((c, i) => org.admin.put(`/api/storyboards/${sb}/clips/${c.id}`, { position: (i * 5) % 25 })),
      ...initial.slice(5, 10).map((c) => org.admin.delete(`/api/storyboards/${sb}/clips/${c.id}`)),
      ...objects.slice(0, 5).map((o, i) => org.admin.post(`/api/storyboards/${sb}/clips`, { objectId: o.id, position: i * 3 })),
      ...Array.from({ length: 5 }, () => org.admin.put(`/api/storyboards/${sb}/clips/reorder`, { clipIds: after })),
    ]);
    for (const r of mixed) expect([200, 201, 400]).toContain(r.status);
    expect(mixed.slice(0, 15).map((r) => r.status)).toEqual([...Array(5).fill(200), ...Array(5).fill(200), ...Array(5).fill(201)]);
    const final = await clipsOf(sb);
    expect(final).toHaveLength(30);
    expect(final.map((c) => c.position)).toEqual(dense(30));
    expect(new Set(final.map((c) => c.id)).size).toBe(30);
    expect(await storedPositions(sb)).toEqual(dense(30));
  }, 60_000);

  test("a bucket-restricted key works on storyboards bound to its bucket", async () => {
    const o = await newOrg(server, "restricted");
    const [b1, b2] = [await newBucket(o), await newBucket(o)];
    const key = await o.keyClient(["read", "write", "delete"], { bucketId: b1.id });
    const unbound = await newStoryboard(o);
    const bound = await newStoryboard(o, { bucketId: b1.id });
    const elsewhere = await newStoryboard(o, { bucketId: b2.id });
    const made = await key.post("/api/storyboards", { name: "by key" });
    expect(made.status).toBe(201);
    expect(made.body.bucketId).toBe(b1.id);
    const list = await key.get("/api/storyboards");
    expect(list.body.data.map((s: { id: string }) => s.id).sort()).toEqual([bound, made.body.id].sort());
    expect(list.body.total).toBe(2);
    const [inB1, inB2] = [await insertObject(server, o, b1.id), await insertObject(server, o, b2.id)];
    for (const res of [
      await key.get(`/api/storyboards/${unbound}`),
      await key.get(`/api/storyboards/${elsewhere}`),
      await key.delete(`/api/storyboards/${unbound}`),
      await key.post(`/api/storyboards/${unbound}/clips`, { objectId: inB1.id }),
      await key.put(`/api/storyboards/${unbound}/clips/reorder`, { clipIds: [] }),
      await key.post(`/api/storyboards/${bound}/clips`, { objectId: inB2.id }),
      await key.post("/api/storyboards", { name: "x", bucketId: b2.id }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    const clip = await key.post(`/api/storyboards/${bound}/clips`, { objectId: inB1.id });
    expect(clip.status).toBe(201);
    // a bound storyboard takes clips of its bucket only, whoever adds them
    const wrong = await o.admin.post(`/api/storyboards/${bound}/clips`, { objectId: inB2.id });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details[0].path).toBe("objectId");
    expect((await o.admin.post(`/api/storyboards/${unbound}/clips`, { objectId: inB2.id })).status).toBe(201);
    expect((await key.put(`/api/storyboards/${bound}/clips/${clip.body.id}`, { note: "ok" })).status).toBe(200);
    expect((await key.delete(`/api/storyboards/${bound}/clips/${clip.body.id}`)).status).toBe(200);
    // binding to a bucket of another organization is 404
    expect((await o.admin.post("/api/storyboards", { name: "x", bucketId: otherBucket.id })).status).toBe(404);
  });
});
