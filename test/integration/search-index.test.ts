import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * Full text is always searched within one organization, and one GIN index over
 * (org_id, vector) answers both conditions: the organization's matches of a term are read
 * from the index alone, never every organization's postings combined with a bitmap of the
 * organization's rows (bench/RESULTS.md, fifth sitting). Both backends build it.
 */
let server: TestServer;
let org: TestOrg;

beforeAll(async () => {
  server = await startServer();
  org = await newOrg(server);
  const bucket = (await org.admin.post("/api/buckets", { name: "indexed" })).body.id as string;
  await upload(org.admin, bucket, "indexed/sunset.jpg", "a", { contentType: "image/jpeg" });
}, 60_000);
afterAll(() => server?.stop());

test("media_search's full-text index is one GIN index over (org_id, vector), and searches still find", async () => {
  const { db } = server.services.deps;
  const defs = rowsOf<{ indexdef: string }>(await db.execute(sql`select indexdef from pg_indexes where tablename = 'media_search' order by indexname`)).map((r) => r.indexdef);
  const gin = defs.filter((d) => /USING gin/i.test(d));
  expect(gin).toHaveLength(1);
  expect(gin[0]).toMatch(/media_search_org_vector_idx ON .*media_search USING gin \(org_id, vector\)/);
  const res = await org.admin.get("/api/search?q=sunset");
  expect(res.status).toBe(200);
  expect(res.body.media.map((m: { key: string }) => m.key)).toEqual(["indexed/sunset.jpg"]);
});
