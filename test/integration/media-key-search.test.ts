import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { eventually } from "../support/eventually.ts";
import { withTwoOrgs } from "../support/fixtures.ts";
import type { Api } from "../support/http.ts";
import { png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";

/**
 * `GET /api/media?search=` with no other filter has a statement of its own (the matches read
 * once, counted and paged in one go). Its answers are held to the listing without the search:
 * the same objects, views and order, keeping those whose key holds the term in any case, with
 * their number as the total, for every sort, order, page and scope, and the same refusals.
 */

type Row = Record<string, any>;

let server: TestServer;
let org: TestOrg;
let other: TestOrg;
let bucket: { id: string; name: string };
let second: { id: string; name: string };
let otherBucket: { id: string; name: string };

withTwoOrgs({
  ready: async (made) => {
    ({ server, org, other, bucket, otherBucket } = made);
    second = await newBucket(org);
    // Sizes repeat, so the order's tie on the sort column (broken by id) is exercised too.
    const files: [string, string, number][] = [
      [bucket.id, "photos/Cat.jpg", 300],
      [bucket.id, "photos/cat-2.jpg", 300],
      [bucket.id, "photos/dog.jpg", 100],
      [bucket.id, "docs/catalogue 50%.pdf", 300],
      [bucket.id, "docs/report_cat.txt", 200],
      [second.id, "cats/tabby.jpg", 100],
      [second.id, "misc/concatenate.bin", 400],
    ];
    const opaque = { contentType: "application/octet-stream" };
    for (const [b, key, size] of files) await upload(org.admin, b, key, bytesOf(size), { ...opaque, tags: key.includes("Cat") ? ["pets"] : [] });
    const picture = await upload(org.admin, bucket.id, "pics/cat-face.png", await png(64, 48), { contentType: "image/png" });
    await eventually(async () => ((await org.admin.get(`/api/media/${picture.id}`)).body.thumbnail?.state === "ready" ? true : undefined), {
      timeoutMs: 60_000,
      what: "the thumbnail",
    });
    // A deleted match, and a key deleted then uploaded again: only the live object counts.
    const gone = await upload(org.admin, bucket.id, "photos/cat-gone.jpg", bytesOf(10), opaque);
    await org.admin.delete(`/api/media/${gone.id}`);
    const old = await upload(org.admin, second.id, "cats/again.jpg", bytesOf(20), opaque);
    await org.admin.delete(`/api/media/${old.id}`);
    await upload(org.admin, second.id, "cats/again.jpg", bytesOf(30), opaque);
    // The other organization's keys hold the same terms.
    for (const key of ["photos/cat.jpg", "cats/x.jpg", "a 50%.txt"]) await upload(other.admin, otherBucket.id, key, bytesOf(50), opaque);
    // The views must not change while they are compared: every thumbnail settled first.
    await eventually(async () => ((await ok(org.admin.get("/api/media?limit=200"))).data.some((o: Row) => o.thumbnail?.state === "pending") ? undefined : true), {
      timeoutMs: 60_000,
      what: "every thumbnail to settle",
    });
  },
});

const ok = async (res: Promise<{ status: number; body: any }>) => {
  const r = await res;
  if (r.status !== 200) throw new Error(`expected 200, got ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
};

/** What the key search must answer: the listing without the search (`listed`, by its query), filtered here. */
async function expected(api: Api, listed: Map<string, Row[]>, term: string, query: string, limit: number, offset: number) {
  if (!listed.has(query)) listed.set(query, (await ok(api.get(`/api/media?limit=200${query}`))).data);
  const all = listed.get(query)!;
  const matches = all.filter((o) => o.key.toLowerCase().includes(term.toLowerCase()));
  const data = matches.slice(offset, offset + limit);
  return { data, total: matches.length, hasMore: offset + data.length < matches.length };
}

describe("GET /api/media?search= (a key search alone)", () => {
  test("every sort, order, page and scope answers the listing's objects, views and order, the total their number", async () => {
    const scopes = ["", `&bucketId=${bucket.id}`, `&bucketId=${second.id}`];
    const pages: [number, number][] = [
      [50, 0],
      [100, 0],
      [2, 0],
      [2, 2],
      [3, 1],
      [1, 5],
      [50, 20],
    ];
    const listed = new Map<string, Row[]>();
    let compared = 0;
    for (const term of ["cat", "CAT", "Cat.", "50%", "_", "zzz", "s/"]) {
      for (const sort of ["created_at", "size", "key"]) {
        for (const order of ["asc", "desc"]) {
          for (const scope of scopes) {
            for (const [limit, offset] of pages) {
              const query = `&sort=${sort}&order=${order}${scope}`;
              const got = await ok(org.admin.get(`/api/media?search=${encodeURIComponent(term)}&limit=${limit}&offset=${offset}${query}`));
              expect({ term, query, limit, offset, ...got }).toEqual({ term, query, limit, offset, ...(await expected(org.admin, listed, term, query, limit, offset)) });
              compared++;
            }
          }
        }
      }
    }
    expect(compared).toBe(7 * 3 * 2 * 3 * 7);
    // The fixture holds what the comparison is about: matches in both buckets, labels, a signed thumbnail.
    const cats = await ok(org.admin.get("/api/media?search=cat&limit=100"));
    expect(cats.total).toBe(8);
    expect(cats.data.find((o: Row) => o.key === "photos/Cat.jpg").tags.map((t: Row) => t.slug)).toEqual(["pets"]);
    expect(cats.data.find((o: Row) => o.key === "pics/cat-face.png").thumbnail.path).toContain("signature=");
  });

  test("a bucket outside the caller's reach: 404 for another organization's or none, 403 outside a restricted key's", async () => {
    for (const id of [otherBucket.id, crypto.randomUUID()]) {
      const res = await org.admin.get(`/api/media?search=cat&bucketId=${id}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    const restricted = await org.keyClient(["read"], { bucketId: second.id });
    expect((await restricted.get(`/api/media?search=cat&bucketId=${bucket.id}`)).status).toBe(403);
    expect((await restricted.get(`/api/media?search=cat&bucketId=${otherBucket.id}`)).status).toBe(404);
    // Without a bucket, or naming its own, a restricted key searches its bucket only.
    const own = await ok(restricted.get(`/api/media?search=cat&bucketId=${second.id}`));
    expect(await ok(restricted.get("/api/media?search=cat"))).toEqual(own);
    expect(own.data.map((o: Row) => o.key).sort()).toEqual(["cats/again.jpg", "cats/tabby.jpg", "misc/concatenate.bin"]);
    expect(own.total).toBe(3);
    // The other organization sees its own matches only.
    expect((await ok(other.admin.get("/api/media?search=cat"))).total).toBe(2);
  });

  test("the index hands over only the caller's organization's candidates, never another's matching keys", async () => {
    const db = server.services.deps.db;
    const count = async (where: ReturnType<typeof sql>) => Number(rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from media_objects where ${where}`))[0]!.n);
    const own = await count(sql`org_id = ${org.orgId}::uuid and key ilike '%cat%'`);
    const everyone = await count(sql`key ilike '%cat%'`);
    expect(everyone).toBeGreaterThan(own);
    // The plan of the search's condition with the table scan ruled out (these tables are tiny),
    // without its `deleted_at is null`, which the heap checks: on tables this small the planner
    // would rather take a partial index on that alone.
    const indexScans = async () => {
      const plan = await db.transaction(async (tx) => {
        await tx.execute(sql`set local enable_seqscan = off`);
        const [row] = rowsOf<Record<string, unknown>>(
          await tx.execute(sql`explain (analyze, format json) select id from media_objects where org_id = ${org.orgId}::uuid and key ilike '%cat%'`),
        );
        const text = Object.values(row!)[0];
        return (typeof text === "string" ? JSON.parse(text) : text) as [{ Plan: Row }];
      });
      const scans: Row[] = [];
      const walk = (node: Row) => {
        if (node["Node Type"] === "Bitmap Index Scan") scans.push(node);
        for (const child of node.Plans ?? []) walk(child);
      };
      walk(plan[0].Plan);
      return scans;
    };
    // Updated rows leave dead versions in the index until a vacuum removes them, which it cannot
    // while another transaction (the server's background work, another test's) still sees them:
    // vacuum until it has, or the ceiling.
    let scans: Row[] = [];
    for (let attempt = 0; attempt < 40; attempt++) {
      await db.execute(sql`vacuum media_objects`);
      scans = await indexScans();
      if (scans[0]?.["Actual Rows"] === own) break;
      await Bun.sleep(250);
    }
    expect(scans.map((n) => [n["Index Name"], n["Actual Rows"]])).toEqual([["media_org_key_trgm_idx", own]]);
  });

  test("a write is seen by the next search: an upload counts, a delete leaves", async () => {
    const before = (await ok(org.admin.get("/api/media?search=cat"))).total;
    const added = await upload(org.admin, bucket.id, "new/cathedral.jpg", bytesOf(5));
    const after = await ok(org.admin.get("/api/media?search=cat&sort=key&order=desc&limit=1"));
    expect(after.total).toBe(before + 1);
    expect(after.data.map((o: Row) => o.key)).toEqual(["pics/cat-face.png"]);
    expect((await ok(org.admin.get("/api/media?search=cathedral"))).data.map((o: Row) => o.id)).toEqual([added.id]);
    await org.admin.delete(`/api/media/${added.id}`);
    expect((await ok(org.admin.get("/api/media?search=cathedral"))).total).toBe(0);
    expect((await ok(org.admin.get("/api/media?search=cat"))).total).toBe(before);
  });
});
