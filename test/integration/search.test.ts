import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { mediaObjects } from "../../db/schema/index.ts";
import { mcpClient } from "../support/fixtures.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

let server: TestServer;
let org: TestOrg;
let other: TestOrg;

interface Seed {
  key: string;
  bucket: "a" | "b";
  size: number;
  contentType: string;
  tags: string[];
  categories: string[];
  metadata?: Record<string, string>;
  day: number;
}
// Known data: every expectation below can be recomputed from this table.
const seeds: Seed[] = [
  { key: "beach/sunset-01.jpg", bucket: "a", size: 100, contentType: "image/jpeg", tags: ["sunset", "beach"], categories: ["travel"], day: 1 },
  { key: "beach/sunset-02.jpg", bucket: "a", size: 200, contentType: "image/jpeg", tags: ["sunset"], categories: ["travel", "italy"], day: 2 },
  { key: "beach/waves.mp4", bucket: "a", size: 3000, contentType: "video/mp4", tags: ["beach"], categories: ["travel"], day: 3 },
  { key: "city/night-rome.jpg", bucket: "a", size: 150, contentType: "image/jpeg", tags: ["night"], categories: ["italy"], metadata: { caption: "golden hour over the river" }, day: 4 },
  { key: "city/sunset-rome.png", bucket: "b", size: 400, contentType: "image/png", tags: ["sunset"], categories: ["italy"], day: 5 },
  { key: "docs/sunset-report.pdf", bucket: "b", size: 5000, contentType: "application/pdf", tags: [], categories: [], metadata: { author: "Ada" }, day: 6 },
  { key: "audio/ocean.mp3", bucket: "b", size: 800, contentType: "audio/mpeg", tags: ["beach"], categories: [], metadata: { mood: "sunset calm" }, day: 7 },
  { key: "img_2026.jpg", bucket: "a", size: 50, contentType: "image/jpeg", tags: [], categories: [], day: 8 },
];
const ids: Record<string, string> = {};
let buckets: Record<"a" | "b", string>;
const categoryIds: Record<string, string> = {};

beforeAll(async () => {
  server = await startServer();
  org = await newOrg(server);
  other = await newOrg(server);
  buckets = { a: (await org.admin.post("/api/buckets", { name: "a" })).body.id, b: (await org.admin.post("/api/buckets", { name: "b" })).body.id };
  // travel > italy: a category includes its descendants in filters
  categoryIds.travel = (await org.admin.post("/api/categories", { name: "Travel" })).body.id;
  categoryIds.italy = (await org.admin.post("/api/categories", { name: "Italy", parentId: categoryIds.travel })).body.id;
  for (const s of seeds) {
    const obj = await upload(org.admin, buckets[s.bucket], s.key, "x".repeat(s.size), { contentType: s.contentType, ...(s.tags.length ? { tags: s.tags } : {}) });
    ids[s.key] = obj.id;
    // Creation dates spread over June 2026 (signing uses the real clock, so dates are set afterwards).
    await server.services.deps.db.update(mediaObjects).set({ createdAt: new Date(Date.UTC(2026, 5, s.day, 12)) }).where(eq(mediaObjects.id, obj.id));
    if (s.categories.length) await org.admin.put(`/api/objects/${obj.id}/categories`, { categoryIds: s.categories.map((c) => categoryIds[c]) });
    if (s.metadata) await org.admin.put(`/api/media/${obj.id}/metadata`, { metadata: s.metadata });
  }
  // the other organization has look-alike data that must never show up
  const ob = (await other.admin.post("/api/buckets", { name: "a" })).body.id;
  await upload(other.admin, ob, "beach/sunset-01.jpg", "other", { tags: ["sunset"] });
});
afterAll(() => server.stop());

const search = (qs: string, api = org.admin) => api.get(`/api/search?${qs}`);
const keys = (res: { body: { media: { key: string }[] } }) => res.body.media.map((m) => m.key);

/** Facets recomputed from the seed table for a set of matching keys. */
function expectedFacets(matching: string[]) {
  const rows = seeds.filter((s) => matching.includes(s.key));
  const count = (values: string[]) => Object.fromEntries([...new Set(values)].map((v) => [v, values.filter((x) => x === v).length]));
  return {
    tags: count(rows.flatMap((r) => r.tags)),
    categories: count(rows.flatMap((r) => r.categories)),
    kinds: count(rows.map((r) => r.contentType.split("/")[0] === "application" ? "pdf" : r.contentType.split("/")[0]!)),
  };
}
const asMap = (list: { slug?: string; kind?: string; count: number }[]) => Object.fromEntries(list.map((f) => [f.slug ?? f.kind, f.count]));

describe("GET /api/search", () => {
  test("q is required and needs a word", async () => {
    expect((await search("")).status).toBe(400);
    expect((await search("q=")).status).toBe(400);
    const negOnly = await search("q=-sunset");
    expect(negOnly.status).toBe(400);
    expect(negOnly.body.error.details[0].path).toBe("q");
  });

  test("a query too costly to run is 400 on q with a message saying which bound it passes (2026 attack run)", async () => {
    const prefixes = await search(`q=${encodeURIComponent(Array.from({ length: 32 }, (_, i) => `s${i}*`).join(" OR "))}`);
    expect(prefixes.status).toBe(400);
    expect(prefixes.body.error.code).toBe("validation_error");
    const messages = prefixes.body.error.details.map((d: { path: string; message: string }) => `${d.path}: ${d.message}`);
    expect(messages).toContain("q: The query has 32 prefix terms (word*); at most 4 are allowed");
    expect(messages).toContain("q: The query has 32 alternatives joined by OR; at most 8 are allowed");
    expect(messages).toContain("q: The query has 32 words and phrases; at most 16 are allowed");
    const short = await search("q=s*");
    expect(short.status).toBe(400);
    expect(short.body.error.details[0].message).toContain("at least 2 letters or digits");
    expect((await search(`q=${"a".repeat(501)}`)).status).toBe(400);
    // Within the bounds the same kind of query runs.
    expect((await search(`q=${encodeURIComponent("sun* OR rep* OR oce* OR wav*")}`)).status).toBe(200);
  });

  test("matches key, file name, tags, categories and metadata; facets count the whole match set", async () => {
    const res = await search("q=sunset");
    expect(res.status).toBe(200);
    const matching = ["beach/sunset-01.jpg", "beach/sunset-02.jpg", "city/sunset-rome.png", "docs/sunset-report.pdf", "audio/ocean.mp3"];
    expect(keys(res).sort()).toEqual([...matching].sort());
    expect(res.body.total).toBe(5);
    const want = expectedFacets(matching);
    expect(asMap(res.body.facets.tags)).toEqual(want.tags);
    expect(asMap(res.body.facets.categories)).toEqual({ travel: 2, italy: 2 });
    expect(asMap(res.body.facets.kinds)).toEqual(want.kinds);
    // facet entries name their labels
    expect(res.body.facets.tags.find((t: { slug: string }) => t.slug === "sunset")).toEqual({ slug: "sunset", name: "sunset", count: 3 });
    // metadata values and category names are searchable too
    expect(keys(await search("q=Ada"))).toEqual(["docs/sunset-report.pdf"]);
    expect(keys(await search("q=italy")).sort()).toEqual(["beach/sunset-02.jpg", "city/night-rome.jpg", "city/sunset-rome.png"]);
  });

  test("ranking: relevance first (key beats metadata), then recency", async () => {
    const res = await search("q=sunset");
    // the audio file only mentions sunset in its metadata: it ranks last
    expect(keys(res).at(-1)).toBe("audio/ocean.mp3");
    // equal relevance: newer first
    const both = keys(await search("q=sunset&tags=sunset&bucketId=" + buckets.a));
    expect(both).toEqual(["beach/sunset-02.jpg", "beach/sunset-01.jpg"]);
  });

  test("query syntax: phrase, negation, prefix, OR, separators", async () => {
    expect(keys(await search(`q=${encodeURIComponent('"golden hour"')}`))).toEqual(["city/night-rome.jpg"]);
    expect(keys(await search(`q=${encodeURIComponent('"hour golden"')}`))).toEqual([]);
    // ocean.mp3 carries the tag "beach", so the negation removes it too
    expect(keys(await search("q=sunset+-beach")).sort()).toEqual(["city/sunset-rome.png", "docs/sunset-report.pdf"]);
    expect(keys(await search("q=rep*"))).toEqual(["docs/sunset-report.pdf"]);
    expect(keys(await search("q=waves+OR+ocean")).sort()).toEqual(["audio/ocean.mp3", "beach/waves.mp4"]);
    expect(keys(await search("q=img_2026.jpg"))).toEqual(["img_2026.jpg"]);
    expect(keys(await search("q=2026"))).toEqual(["img_2026.jpg"]);
    expect(keys(await search("q=SUNSET")).length).toBe(5);
  });

  test("each filter alone and combined", async () => {
    expect(keys(await search("q=sunset&kind=image")).sort()).toEqual(["beach/sunset-01.jpg", "beach/sunset-02.jpg", "city/sunset-rome.png"]);
    expect(keys(await search(`q=sunset&bucketId=${buckets.b}`)).sort()).toEqual(["audio/ocean.mp3", "city/sunset-rome.png", "docs/sunset-report.pdf"]);
    expect(keys(await search("q=sunset&tags=sunset,beach"))).toEqual(["beach/sunset-01.jpg"]);
    expect(keys(await search("q=beach&tags=beach")).sort()).toEqual(seeds.filter((s) => s.tags.includes("beach")).map((s) => s.key).sort());
    // a category includes its descendants
    expect(keys(await search("q=sunset&categories=travel")).sort()).toEqual(["beach/sunset-01.jpg", "beach/sunset-02.jpg", "city/sunset-rome.png"]);
    expect(keys(await search("q=sunset&categories=italy")).sort()).toEqual(["beach/sunset-02.jpg", "city/sunset-rome.png"]);
    expect(keys(await search("q=sunset&sizeMin=200&sizeMax=1000")).sort()).toEqual(["audio/ocean.mp3", "beach/sunset-02.jpg", "city/sunset-rome.png"]);
    expect(keys(await search("q=sunset&dateFrom=2026-06-02&dateTo=2026-06-05")).sort()).toEqual(["beach/sunset-02.jpg", "city/sunset-rome.png"]);
    expect(keys(await search("q=sunset&dateTo=2026-06-01T12:00:00Z"))).toEqual(["beach/sunset-01.jpg"]);
    const combined = await search(`q=sunset&kind=image&bucketId=${buckets.a}&categories=italy&sizeMax=500`);
    expect(keys(combined)).toEqual(["beach/sunset-02.jpg"]);
    expect(asMap(combined.body.facets.kinds)).toEqual({ image: 1 });
    // unknown slugs match nothing
    expect((await search("q=sunset&tags=nope")).body).toEqual({ media: [], total: 0, totalRelation: "eq", facets: { tags: [], categories: [], kinds: [] }, facetsApproximate: false });
  });

  test("bad filters are 400; a foreign bucket is 404", async () => {
    for (const q of ["q=a&kind=movie", "q=a&sizeMin=-1", "q=a&sizeMin=10&sizeMax=5", "q=a&dateFrom=yesterday", "q=a&dateFrom=2026-06-05&dateTo=2026-06-01", "q=a&limit=0", "q=a&offset=-1", "q=a&foo=1"]) {
      expect((await search(q)).status).toBe(400);
    }
    const theirs = (await other.admin.get("/api/buckets")).body.data[0].id;
    expect((await search(`q=sunset&bucketId=${theirs}`)).status).toBe(404);
  });

  test("pagination is consistent with total", async () => {
    const all = keys(await search("q=sunset"));
    const pages: string[] = [];
    for (let offset = 0; offset < 5; offset += 2) {
      const page = await search(`q=sunset&limit=2&offset=${offset}`);
      expect(page.body.total).toBe(5);
      expect(asMap(page.body.facets.kinds)).toEqual(asMap((await search("q=sunset")).body.facets.kinds));
      pages.push(...keys(page));
    }
    expect(pages).toEqual(all);
    expect(keys(await search("q=sunset&offset=5"))).toEqual([]);
  });

  test("other organizations' objects never appear; a bucket-restricted key sees only its bucket", async () => {
    const theirs = await search("q=sunset", other.admin);
    expect(theirs.body.total).toBe(1);
    expect(theirs.body.media[0].id).not.toBe(ids["beach/sunset-01.jpg"]);
    const restricted = await org.keyClient(["read"], { bucketId: buckets.b });
    const res = await search("q=sunset", restricted);
    expect(keys(res).sort()).toEqual(["audio/ocean.mp3", "city/sunset-rome.png", "docs/sunset-report.pdf"]);
    expect((await search(`q=sunset&bucketId=${buckets.a}`, restricted)).status).toBe(403);
  });

  test("changes are searchable right after the call; deleted objects never match", async () => {
    const id = ids["img_2026.jpg"]!;
    expect(keys(await search("q=zebra"))).toEqual([]);
    await org.admin.put(`/api/media/${id}/metadata`, { metadata: { animal: "zebra" } });
    expect(keys(await search("q=zebra"))).toEqual(["img_2026.jpg"]);
    const tag = (await org.admin.post("/api/tags", { name: "Striped" })).body;
    await org.admin.put(`/api/objects/${id}/tags`, { tagIds: [tag.id] });
    expect(keys(await search("q=striped"))).toEqual(["img_2026.jpg"]);
    expect(keys(await search("q=zebra&tags=striped"))).toEqual(["img_2026.jpg"]);
    await org.admin.delete(`/api/tags/${tag.id}`);
    expect(keys(await search("q=striped"))).toEqual([]);
    await org.admin.delete(`/api/media/${id}`);
    expect(keys(await search("q=zebra"))).toEqual([]);
    expect((await search("q=2026")).body.total).toBe(0);
  });

  test("search is an MCP tool whose structured output includes the facets", async () => {
    const client = await mcpClient(server, org.adminKey.secret, "search");
    await client.listTools();
    const result = await client.callTool({ name: "search", arguments: { q: "sunset", kind: "image" } });
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as { total: number; facets: { kinds: { kind: string; count: number }[] } };
    expect(out.total).toBe(3);
    expect(out.facets.kinds).toEqual([{ kind: "image", count: 3 }]);
    await client.close();
  });
});
