import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { touchSearch } from "../../domain/search/index-rows.ts";
import { testEnv } from "../support/env.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * Full text is always searched within one organization, and one GIN index over
 * (org_id, vector) answers both conditions: the organization's matches of a term are read
 * from the index alone, never every organization's postings combined with a bitmap of the
 * organization's rows (bench/notes/2026-11-27-fifth-sitting.md). Both backends build it.
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

/**
 * Two transactions that rewrite the same object's search row at once (a label set while its
 * upload confirms): the second waits for the first and writes over its row. Deleting and then
 * inserting failed here with a duplicate key: neither transaction saw a row to delete.
 */
test.skipIf(testEnv.mode !== "services")("two transactions rewriting one object's search row at once both commit (PostgreSQL)", async () => {
  const { db } = server.services.deps;
  const bucket = (await org.admin.post("/api/buckets", { name: "twice" })).body.id as string;
  const obj = await upload(org.admin, bucket, "twice/a.jpg", "a", { contentType: "image/jpeg" });
  await db.execute(sql`delete from media_search where object_id = ${obj.id}`);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let wrote!: () => void;
  const written = new Promise<void>((r) => (wrote = r));
  const first = db.transaction(async (tx) => {
    await touchSearch(tx, server.services.deps, org.orgId, [obj.id]);
    wrote();
    await released;
  });
  await written;
  const second = db.transaction((tx) => touchSearch(tx, server.services.deps, org.orgId, [obj.id]));
  // The second waits on the first's new row in the primary key before the first commits.
  for (let i = 0; ; i++) {
    const [w] = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`));
    if (w!.n > 0) break;
    if (i > 200) throw new Error("the second transaction never waited");
    await Bun.sleep(10);
  }
  release();
  await first;
  await second;
  const rows = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from media_search where object_id = ${obj.id}`));
  expect(rows[0]!.n).toBe(1);
  expect((await org.admin.get("/api/search?q=twice")).body.media.map((m: { id: string }) => m.id)).toEqual([obj.id]);
});
