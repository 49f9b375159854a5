import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import type { Deps } from "../../domain/core/deps.ts";
import { answerCacheFor, SearchAnswerCache } from "../../domain/search/answer-cache.ts";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * A search asked again answers from the hits kept for it (domain/search/answer-cache.ts) only
 * while nothing searchable of its organization changed: every kind of write a caller makes is
 * in its very next search, through this instance or another on the same database, and a key
 * restricted to one bucket never gets an answer counted over others.
 */
let server: TestServer;
let org: TestOrg;
let buckets: { a: string; b: string };

/** Counts the searches answered from kept hits, on this server's cache. */
function countKept(deps: Deps) {
  const cache = answerCacheFor(deps.db);
  // lookup is lookupAlong without a subquery: every lookup goes through it.
  const lookup = cache.lookupAlong.bind(cache);
  const counter = { kept: 0 };
  cache.lookupAlong = (async (...args: Parameters<typeof lookup>) => {
    const found = await lookup(...args);
    if (found.hits) counter.kept++;
    return found;
  }) as typeof cache.lookupAlong;
  return counter;
}

let kept: { kept: number };

beforeAll(async () => {
  server = await startServer();
  org = await newOrg(server);
  buckets = { a: (await org.admin.post("/api/buckets", { name: "a" })).body.id, b: (await org.admin.post("/api/buckets", { name: "b" })).body.id };
  await upload(org.admin, buckets.a, "zebra/one.jpg", "x", { contentType: "image/jpeg", tags: ["stripes"] });
  await upload(org.admin, buckets.b, "zebra/two.png", "xx", { contentType: "image/png", tags: ["stripes", "savanna"] });
  await upload(org.admin, buckets.a, "lion.jpg", "xxx", { contentType: "image/jpeg" });
  kept = countKept(server.services.deps);
});
afterAll(() => server?.stop());

const search = (qs: string, api = org.admin) => api.get(`/api/search?${qs}`);
const keysOf = (res: { body: { media: { key: string }[] } }) => res.body.media.map((m) => m.key).sort();
const tagCounts = (res: { body: { facets: { tags: { slug: string; count: number }[] } } }) => Object.fromEntries(res.body.facets.tags.map((t) => [t.slug, t.count]));

describe("kept search answers", () => {
  test("the same search asked again is answered from its kept hits, with the same answer", async () => {
    const first = await search("q=zebra");
    expect(first.status).toBe(200);
    const before = kept.kept;
    const again = await search("q=zebra");
    expect(kept.kept).toBe(before + 1);
    expect(again.body).toEqual(first.body);
    expect(again.body.total).toBe(2);
    // Another page, filter or query is another answer.
    expect((await search("q=zebra&limit=1")).body.media).toHaveLength(1);
    expect((await search("q=zebra&kind=image&bucketId=" + buckets.b)).body.total).toBe(1);
    expect(kept.kept).toBe(before + 1);
  });

  test("each write of the caller is in its next search", async () => {
    const run = () => search("q=zebra");
    await run();
    await run();
    // an upload, confirmed
    const three = await upload(org.admin, buckets.a, "zebra/three.gif", "xxxx", { contentType: "image/gif" });
    let res = await run();
    expect(keysOf(res)).toEqual(["zebra/one.jpg", "zebra/three.gif", "zebra/two.png"]);
    // metadata
    const lion = (await search("q=lion")).body.media[0];
    expect((await org.admin.put(`/api/media/${lion.id}/metadata`, { metadata: { seen: "zebra crossing" } })).status).toBe(200);
    res = await run();
    expect(res.body.total).toBe(4);
    // tags
    const tag = (await org.admin.post("/api/tags", { name: "herd" })).body;
    expect((await org.admin.put(`/api/objects/${three.id}/tags`, { tagIds: [tag.id] })).status).toBe(200);
    res = await run();
    expect(tagCounts(res)).toEqual({ stripes: 2, savanna: 1, herd: 1 });
    // a tag deleted: gone from the facets
    expect((await org.admin.delete(`/api/tags/${tag.id}`)).status).toBeLessThan(300);
    res = await run();
    expect(tagCounts(res)).toEqual({ stripes: 2, savanna: 1 });
    // a delete
    expect((await org.admin.delete(`/api/media/${three.id}`)).status).toBeLessThan(300);
    res = await run();
    expect(res.body.total).toBe(3);
    expect(keysOf(res)).not.toContain("zebra/three.gif");
    // and unchanged since: kept again
    const before = kept.kept;
    expect((await run()).body).toEqual(res.body);
    expect(kept.kept).toBe(before + 1);
  });

  test("another organization's writes leave its kept answers alone", async () => {
    const other = await newOrg(server);
    await search("q=zebra");
    const ob = (await other.admin.post("/api/buckets", { name: "a" })).body.id;
    await upload(other.admin, ob, "zebra/elsewhere.jpg", "x");
    const before = kept.kept;
    const res = await search("q=zebra");
    expect(kept.kept).toBe(before + 1);
    expect(keysOf(res)).not.toContain("zebra/elsewhere.jpg");
  });

  test("a key restricted to a bucket never gets an answer counted over other buckets", async () => {
    const all = await search("q=stripes");
    expect(all.body.total).toBe(2);
    // The hits are kept; the views are read afresh (a thumbnail may have changed state meanwhile).
    const hitsOf = (res: typeof all) => ({ keys: keysOf(res), total: res.body.total, facets: res.body.facets });
    expect(hitsOf(await search("q=stripes"))).toEqual(hitsOf(all));
    const onlyA = await org.keyClient(["read"], { bucketId: buckets.a });
    const res = await search("q=stripes", onlyA);
    expect(res.status).toBe(200);
    expect(keysOf(res)).toEqual(["zebra/one.jpg"]);
    expect(res.body.total).toBe(1);
    expect(tagCounts(res)).toEqual({ stripes: 1 });
    // and the other way round, after the restricted answer was kept
    expect((await search("q=stripes", onlyA)).body.total).toBe(1);
    expect((await search("q=stripes")).body.total).toBe(2);
  });

  test("memory is bounded: the least recently asked answers go", () => {
    const cache = new SearchAnswerCache();
    const hits = { ids: [], total: 0, totalRelation: "eq" as const, facets: { tags: [], categories: [], kinds: [] }, facetsApproximate: false };
    for (let i = 0; i < 1_500; i++) cache.store(`k${i}`, { snapshot: "1:1:", at: 0 }, hits);
    expect(cache.size).toBe(1_000);
  });

  test("pruning deletes only change rows no kept answer can need", async () => {
    const db = server.services.deps.db;
    let now = 0;
    const cache = new SearchAnswerCache(() => now);
    const key = "prune-test";
    const first = await cache.lookup(db, org.orgId, key);
    const hits = { ids: [], total: 0, totalRelation: "eq" as const, facets: { tags: [], categories: [], kinds: [] }, facetsApproximate: false };
    cache.store(key, first.taken, hits);
    await upload(org.admin, buckets.a, "zebra/four.jpg", "x");
    const rowsOfOrg = async () =>
      rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from search_changes where org_id = ${org.orgId}`))[0]!.n;
    expect(await rowsOfOrg()).toBeGreaterThan(0);
    // Rows of transactions that had ended before the snapshot the prune goes by (the cache sees
    // its own a moment later; other work on the server may hold the horizon back, never forward).
    const horizon = await horizonPast(db, org.orgId);
    const settledRows = async () =>
      rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from search_changes where org_id = ${org.orgId} and xid < ${horizon}::xid8`))[0]!.n;
    expect(await settledRows()).toBeGreaterThan(0);
    // Too soon: an answer kept anywhere may still need them.
    now = 30_000;
    await cache.lookup(db, org.orgId, "another");
    cache.prune(db, (err) => {
      throw err;
    });
    await Bun.sleep(50);
    expect(await settledRows()).toBeGreaterThan(0);
    // Once every answer made before the upload has expired, its rows can go.
    now = 100_000;
    await cache.lookup(db, org.orgId, "another");
    cache.prune(db, (err) => {
      throw err;
    });
    await eventually(async () => ((await settledRows()) === 0 ? true : undefined), { what: "the prune" });
    // The kept answer expired with them: not served.
    expect((await cache.lookup(db, org.orgId, key)).hits).toBeNull();
  });

  test("where nobody searches, the maintenance pass deletes the change rows no answer can need", async () => {
    const db = server.services.deps.db;
    let now = 0;
    const cache = new SearchAnswerCache(() => now);
    await upload(org.admin, buckets.a, "zebra/five.jpg", "x");
    const horizon = await horizonPast(db, org.orgId);
    const settledRows = async () =>
      rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from search_changes where org_id = ${org.orgId} and xid < ${horizon}::xid8`))[0]!.n;
    expect(await settledRows()).toBeGreaterThan(0);
    // The first pass only sees a snapshot; a minute later an answer kept anywhere may still need the rows.
    expect(await cache.housekeep(db)).toBe(0);
    now = 30_000;
    expect(await cache.housekeep(db)).toBe(0);
    expect(await settledRows()).toBeGreaterThan(0);
    now = 100_000;
    expect(await cache.housekeep(db)).toBeGreaterThan(0);
    expect(await settledRows()).toBe(0);
  });
});

/**
 * A key search (GET /api/media?search=) asked again answers from its page as kept, under the
 * same rule: each write that changes what it matches or sorts on is in the next listing, and
 * the listing agrees with each object's own answer.
 */
describe("kept key searches", () => {
  const list = (qs: string, api = org.admin) => api.get(`/api/media?${qs}`);
  const keys = (res: { body: { data: { key: string }[] } }) => res.body.data.map((m) => m.key);

  test("the same key search asked again is answered from its kept page, with the same answer", async () => {
    const first = await list("search=okapi");
    expect(first.status).toBe(200);
    await upload(org.admin, buckets.a, "okapi/one.jpg", "x", { contentType: "image/jpeg" });
    const fresh = await list("search=okapi");
    expect(fresh.body.total).toBe(1);
    const before = kept.kept;
    const again = await list("search=okapi");
    expect(kept.kept).toBe(before + 1);
    expect(again.body).toEqual(fresh.body);
    // Each view is the object's own answer.
    const [view] = again.body.data;
    expect((await org.admin.get(`/api/media/${view.id}`)).body).toEqual(view);
  });

  test("each write that changes what a key search matches or sorts on is in the next listing", async () => {
    const bySize = () => list("search=gnu&sort=size&order=desc");
    const byKey = () => list("search=gnu&sort=key&order=asc&limit=2");
    const small = await upload(org.admin, buckets.a, "gnu/a.jpg", "x", { contentType: "image/jpeg" });
    const large = await upload(org.admin, buckets.a, "gnu/b.jpg", "xxxxx", { contentType: "image/jpeg" });
    expect(keys(await bySize())).toEqual(["gnu/b.jpg", "gnu/a.jpg"]);
    expect(keys(await bySize())).toEqual(["gnu/b.jpg", "gnu/a.jpg"]);
    // new bytes at a key: a new size, another order
    await upload(org.admin, buckets.a, "gnu/a.jpg", "xxxxxxxxxx", { contentType: "image/jpeg" });
    let res = await bySize();
    expect(keys(res)).toEqual(["gnu/a.jpg", "gnu/b.jpg"]);
    expect(res.body.data[0].size).toBe(10);
    // a rename: out of the matches, and another page
    expect(keys(await byKey())).toEqual(["gnu/a.jpg", "gnu/b.jpg"]);
    expect((await org.admin.post(`/api/media/${large.id}/move`, { key: "zoo/b.jpg" })).status).toBe(200);
    res = await byKey();
    expect(keys(res)).toEqual(["gnu/a.jpg"]);
    expect(res.body.total).toBe(1);
    // a move to another bucket: out of a bucket's listing
    const inA = () => list(`search=gnu&bucketId=${buckets.a}`);
    expect((await inA()).body.total).toBe(1);
    expect((await inA()).body.total).toBe(1);
    expect((await org.admin.post(`/api/media/${small.id}/move`, { key: "gnu/a.jpg", bucketId: buckets.b })).status).toBe(200);
    expect((await inA()).body.total).toBe(0);
    expect((await list(`search=gnu&bucketId=${buckets.b}`)).body.total).toBe(1);
    // a delete, then the restore
    expect((await org.admin.delete(`/api/media/${small.id}`)).status).toBeLessThan(300);
    expect((await byKey()).body.total).toBe(0);
    expect((await byKey()).body.total).toBe(0);
    expect((await org.admin.post(`/api/trash/${small.id}/restore`, {})).status).toBe(200);
    res = await byKey();
    expect(keys(res)).toEqual(["gnu/a.jpg"]);
    // labels change no match of a key search, yet the view read afresh carries them
    const tag = (await org.admin.post("/api/tags", { name: "horned" })).body;
    expect((await org.admin.put(`/api/objects/${small.id}/tags`, { tagIds: [tag.id] })).status).toBe(200);
    res = await byKey();
    expect(res.body.data[0]).toEqual((await org.admin.get(`/api/media/${small.id}`)).body);
  });

  test("a deleted bucket's key search is 404 at once, even asked again just before", async () => {
    const gone = (await org.admin.post("/api/buckets", { name: "soon-gone" })).body.id;
    const inGone = () => list(`search=gnu&bucketId=${gone}`);
    expect((await inGone()).body.total).toBe(0);
    expect((await inGone()).body.total).toBe(0);
    expect((await org.admin.delete(`/api/buckets/${gone}`)).status).toBeLessThan(300);
    expect((await inGone()).status).toBe(404);
  });

  test("another organization's objects and a bucket-restricted key's answers are never shared", async () => {
    await upload(org.admin, buckets.a, "eland/a.jpg", "x");
    await upload(org.admin, buckets.b, "eland/b.jpg", "x");
    expect((await list("search=eland")).body.total).toBe(2);
    expect((await list("search=eland")).body.total).toBe(2);
    const onlyB = await org.keyClient(["read"], { bucketId: buckets.b });
    const restricted = await list("search=eland", onlyB);
    expect(restricted.status).toBe(200);
    expect(keys(restricted)).toEqual(["eland/b.jpg"]);
    expect((await list("search=eland", onlyB)).body.total).toBe(1);
    const other = await newOrg(server);
    const ob = (await other.admin.post("/api/buckets", { name: "a" })).body.id;
    expect((await list("search=eland", other.admin)).body.total).toBe(0);
    await upload(other.admin, ob, "eland/c.jpg", "x");
    expect((await list("search=eland", other.admin)).body.total).toBe(1);
    const before = kept.kept;
    expect((await list("search=eland")).body.total).toBe(2);
    expect(kept.kept).toBe(before + 1);
  });
});

/**
 * The oldest transaction still running, once it is past every change row of the organization.
 * A long transaction anywhere on the PostgreSQL server (another database's work) holds it back,
 * and rows it holds back are rightly kept: the tests wait for it instead of failing.
 */
async function horizonPast(db: Deps["db"], orgId: string): Promise<string> {
  const newest = BigInt(rowsOf<{ x: string }>(await db.execute(sql`select max(xid)::text as x from search_changes where org_id = ${orgId}`))[0]!.x);
  return eventually(
    async () => {
      const x = rowsOf<{ x: string }>(await db.execute(sql`select pg_snapshot_xmin(pg_current_snapshot())::text as x`))[0]!.x;
      return BigInt(x) > newest ? x : undefined;
    },
    { what: "the oldest running transaction to pass the organization's change rows" },
  );
}

const shared = testEnv.mode === "services";
describe.skipIf(!shared)(shared ? "two instances on one database" : "two instances on one database: SKIPPED, embedded run (one process's database)", () => {
  let b: TestServer;
  beforeAll(async () => {
    b = await startServer();
  });
  afterAll(() => b?.stop());

  test("a write through one instance is in the next search through the other", async () => {
    const onB = b.api.withToken(org.adminKey.secret);
    const keptOnB = countKept(b.services.deps);
    const first = await search("q=giraffe", onB);
    expect(first.body.total).toBe(0);
    expect((await search("q=giraffe", onB)).body.total).toBe(0);
    expect(keptOnB.kept).toBe(1);
    const giraffe = await upload(org.admin, buckets.a, "giraffe.jpg", "x", { contentType: "image/jpeg" });
    const res = await search("q=giraffe", onB);
    expect(res.body.total).toBe(1);
    expect(res.body.media[0].id).toBe(giraffe.id);
    expect((await org.admin.put(`/api/media/${giraffe.id}/metadata`, { metadata: { note: "tall" } })).status).toBe(200);
    expect((await search("q=tall", onB)).body.total).toBe(1);
    expect((await search("q=tall", onB)).body.total).toBe(1);
    expect((await org.admin.put(`/api/media/${giraffe.id}/metadata`, { metadata: {} })).status).toBe(200);
    expect((await search("q=tall", onB)).body.total).toBe(0);
  });

  test("a rename through one instance is in the next key search through the other", async () => {
    const onB = b.api.withToken(org.adminKey.secret);
    const hippo = await upload(org.admin, buckets.a, "hippo.jpg", "x", { contentType: "image/jpeg" });
    expect((await onB.get("/api/media?search=hippo")).body.total).toBe(1);
    expect((await onB.get("/api/media?search=hippo")).body.total).toBe(1);
    expect((await org.admin.post(`/api/media/${hippo.id}/move`, { key: "river-horse.jpg" })).status).toBe(200);
    expect((await onB.get("/api/media?search=hippo")).body.total).toBe(0);
  });
});
