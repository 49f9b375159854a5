import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { writeSearchRows } from "../../domain/search/index-rows.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";
import { mcpClient } from "../support/fixtures.ts";

/**
 * Totals and facets are exact up to SEARCH_EXACT_LIMIT matches; past it the total is the
 * limit with `totalRelation: "gte"` and the facets are flagged approximate (PostgreSQL
 * backend; the Meilisearch side is test/unit/meilisearch-protocol.test.ts).
 */
describe("a small exact limit (SEARCH_EXACT_LIMIT=5)", () => {
  let server: TestServer;
  let org: TestOrg;

  beforeAll(async () => {
    server = await startServer({ env: { SEARCH_EXACT_LIMIT: "5" } });
    org = await newOrg(server);
    const bucket = (await org.admin.post("/api/buckets", { name: "limit" })).body.id as string;
    // "alpha": 5 objects (at the limit); "beta": 7 (past it). Tags and kinds known per object.
    for (let i = 0; i < 5; i++) await upload(org.admin, bucket, `alpha/${i}.jpg`, "a", { contentType: "image/jpeg", tags: i < 3 ? ["red"] : ["blue"] });
    for (let i = 0; i < 7; i++) await upload(org.admin, bucket, `beta/${i}.${i % 2 ? "mp4" : "jpg"}`, "b", { contentType: i % 2 ? "video/mp4" : "image/jpeg", tags: ["green"] });
  }, 60_000);
  afterAll(() => server?.stop());

  const search = async (qs: string) => {
    const res = await org.admin.get(`/api/search?${qs}`);
    expect(res.status).toBe(200);
    return res.body;
  };

  test("at the limit: total, facets and pages are exact, and say so", async () => {
    const body = await search("q=alpha&limit=2");
    expect(body.total).toBe(5);
    expect(body.totalRelation).toBe("eq");
    expect(body.facetsApproximate).toBe(false);
    expect(body.facets.tags).toEqual([
      { slug: "red", name: "red", count: 3 },
      { slug: "blue", name: "blue", count: 2 },
    ]);
    expect(body.facets.kinds).toEqual([{ kind: "image", count: 5 }]);
    // Every match is reachable by paging, each once, best (then newest) first.
    const pages = [await search("q=alpha&limit=2&offset=0"), await search("q=alpha&limit=2&offset=2"), await search("q=alpha&limit=2&offset=4")];
    const keys = pages.flatMap((p) => p.media.map((m: { key: string }) => m.key));
    expect(keys.sort()).toEqual(["alpha/0.jpg", "alpha/1.jpg", "alpha/2.jpg", "alpha/3.jpg", "alpha/4.jpg"]);
  });

  test("past the limit: the total is the limit as a lower bound, and the facets cover that many and are flagged", async () => {
    const body = await search("q=beta");
    expect(body.total).toBe(5);
    expect(body.totalRelation).toBe("gte");
    expect(body.facetsApproximate).toBe(true);
    expect(body.media).toHaveLength(5);
    expect(body.facets.tags).toEqual([{ slug: "green", name: "green", count: 5 }]);
    expect(body.facets.kinds.reduce((n: number, k: { count: number }) => n + k.count, 0)).toBe(5);
  });

  test("a filter that brings the matches under the limit makes the answer exact again", async () => {
    const body = await search("q=beta&kind=video");
    expect(body).toMatchObject({ total: 3, totalRelation: "eq", facetsApproximate: false });
  });

  test("no match: zero, exact", async () => {
    expect(await search("q=nothingmatches")).toMatchObject({ total: 0, totalRelation: "eq", facetsApproximate: false, media: [] });
  });

  test("MCP's search tool answers the same fields", async () => {
    const client = await mcpClient(server, org.adminKey.secret, "search-limit");
    const result = await client.callTool({ name: "search", arguments: { q: "beta" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ total: 5, totalRelation: "gte", facetsApproximate: true });
    await client.close();
  });
});

describe("the real limit (10,000)", () => {
  let server: TestServer;
  let org: TestOrg;
  let bucket: string;

  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server);
    bucket = (await org.admin.post("/api/buckets", { name: "big" })).body.id as string;
    // 20,000 objects inserted in bulk, "common" in every second one: exactly 10,000 matches.
    const db = server.services.deps.db;
    await db.execute(sql`
      insert into media_objects (id, org_id, bucket_id, key, size, content_type, kind, metadata, created_at, updated_at)
      select gen_random_uuid(), ${org.orgId}, ${bucket}, 'bulk/' || (case when i % 2 = 0 then 'common-' else 'other-' end) || i || '.jpg',
             1, 'image/jpeg', (case when i % 4 = 0 then 'image' else 'video' end), '{}'::jsonb, now() - (i || ' seconds')::interval, now()
        from generate_series(0, 19999) i`);
    await writeSearchRows(db, sql`o.org_id = ${org.orgId}`);
  }, 120_000);
  afterAll(() => server?.stop());

  test("10,000 matches: exact; one more: a lower bound of 10,000", async () => {
    const at = (await org.admin.get("/api/search?q=common&limit=1")).body;
    expect(at).toMatchObject({ total: 10_000, totalRelation: "eq", facetsApproximate: false });
    expect(at.facets.kinds).toEqual([
      { kind: "image", count: 5_000 },
      { kind: "video", count: 5_000 },
    ]);
    await upload(org.admin, bucket, "late/common-extra.jpg", "x", { contentType: "image/jpeg" });
    const past = (await org.admin.get("/api/search?q=common&limit=1")).body;
    expect(past).toMatchObject({ total: 10_000, totalRelation: "gte", facetsApproximate: true });
    expect(past.facets.kinds.reduce((n: number, k: { count: number }) => n + k.count, 0)).toBe(10_000);
  }, 60_000);
});
