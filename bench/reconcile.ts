/**
 * `npm run bench -- reconcile [sizes...]`: reconcile's memory and time against the number of
 * objects. For each size N (default 100,000 and 1,000,000) a scratch PostgreSQL database gets
 * one organization with N object rows (generate_series), and reconcile runs in this process
 * against a storage listing of the same N keys generated page by page (so what is measured is
 * reconcile, not a storage server holding N objects). Every 100,000th object lacks its bytes
 * and has a stray neighbour without a row, so the findings are known. Peak RSS is sampled every
 * 50 ms; bounded memory means it does not grow with N.
 */
import { sql } from "drizzle-orm";
import { loadConfig } from "../app/config.ts";
import { createLogger } from "../app/log.ts";
import { openDatabase } from "../db/client.ts";
import { createOrganization } from "../domain/access/organizations.ts";
import { systemClock } from "../domain/core/clock.ts";
import type { Deps } from "../domain/core/deps.ts";
import type { ListedObject, ObjectStorage } from "../domain/ports/storage.ts";
import { reconcileOrganization } from "../domain/reconcile/reconcile.ts";
import { int, load1, scratch, writeSection } from "./_load.ts";

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const runs = sizes.length > 0 ? sizes : [100_000, 1_000_000];
const EVERY = 100_000;
const keyOf = (i: number) => `r/${String(i).padStart(8, "0")}`;
const old = new Date("2026-01-01T00:00:00Z");

/** A listing of N objects under `<bucketId>/`, in order, 1,000 a page, made as it is read. */
function syntheticStorage(bucketId: string, n: number): ObjectStorage {
  return {
    async *list(prefix: string): AsyncIterable<ListedObject[]> {
      if (prefix !== `${bucketId}/`) return;
      let page: ListedObject[] = [];
      for (let i = 0; i < n; i++) {
        const missing = i % EVERY === 0;
        if (!missing) page.push({ key: `${prefix}${keyOf(i)}`, size: i % 1000, lastModified: old });
        if (i % EVERY === 1) page.push({ key: `${prefix}${keyOf(i)}x`, size: 1, lastModified: old });
        if (page.length >= 1000) {
          yield page;
          page = [];
        }
      }
      if (page.length > 0) yield page;
    },
    async *listPrefixes() {},
  } as unknown as ObjectStorage;
}

const log = createLogger("warn");
const config = loadConfig({});
const lines: string[] = [];
for (const n of runs) {
  const db0 = await scratch(`reconcile${n}`);
  const database = await openDatabase({ url: db0.databaseUrl, dataDir: "unused" });
  try {
    const orgId = crypto.randomUUID();
    const bucketId = crypto.randomUUID();
    await database.db.transaction((tx) => createOrganization({ config, clock: systemClock }, tx, { id: orgId, name: "Bench" }));
    await database.db.execute(sql`insert into buckets (id, org_id, name) values (${bucketId}, ${orgId}, 'bench')`);
    const seeded = performance.now();
    for (let start = 0; start < n; start += 200_000) {
      const end = Math.min(n, start + 200_000) - 1;
      await database.db.execute(sql`
        insert into media_objects (org_id, bucket_id, key, size, content_type, kind)
        select ${orgId}, ${bucketId}, 'r/' || lpad(i::text, 8, '0'), i % 1000, 'text/plain', 'other'
        from generate_series(${start}::int, ${end}::int) i`);
    }
    await database.db.execute(sql`analyze media_objects`);
    console.error(`seeded ${int(n)} rows in ${((performance.now() - seeded) / 1000).toFixed(0)} s`);

    const deps = { db: database.db, clock: systemClock, log, config, storage: syntheticStorage(bucketId, n), jobs: { kick() {} } } as unknown as Deps;
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const started = performance.now();
    const report = await reconcileOrganization(deps, orgId, { fix: false, olderThanMs: 0 });
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    const expected = Math.ceil(n / EVERY);
    if (report.rowsWithoutBytes.count !== expected || report.bytesWithoutRow.count !== expected) {
      throw new Error(`wrong findings at ${n}: ${report.rowsWithoutBytes.count} rows without bytes, ${report.bytesWithoutRow.count} bytes without row; expected ${expected} each`);
    }
    const line = `| ${int(n)} | ${int(report.scanned.storageObjects)} | ${int(report.scanned.rows)} | ${seconds.toFixed(1)} | ${int(n / seconds)} | ${((before) / 2 ** 20).toFixed(0)} | ${(peak / 2 ** 20).toFixed(0)} | ${((peak - before) / 2 ** 20).toFixed(0)} | ${load1()} |`;
    console.error(line);
    lines.push(line);
  } finally {
    await database.close();
    await db0.drop();
  }
}

if (!process.env.BENCH_NO_WRITE) writeSection(
  "reconcile",
  `## reconcile — memory and time against the number of objects

\`npm run bench -- reconcile\`: one organization, N object rows in PostgreSQL, a storage listing of
the same N keys made page by page in the benchmark's process (what is measured is reconcile's
merge-join and its cursor, not a storage server), every 100,000th object missing its bytes and
with a stray neighbour; findings checked. RSS is the whole process (Bun, the PostgreSQL driver,
the listing generator), sampled every 50 ms. ${new Date().toISOString().slice(0, 10)}, Bun ${Bun.version}, 2 vCPU shared with other work.

| objects | listed | rows compared | seconds | objects/s | RSS before, MiB | peak RSS, MiB | growth, MiB | load (1 min) |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${lines.join("\n")}

Memory does not grow with the number of objects: each side holds one page (1,000 entries) at a
time, and findings keep a count and the first 20 of each kind.
`,
);
process.exit(0);
