/**
 * Bulk seeding for the list and search benchmarks: N media objects in one organization,
 * inserted with generate_series (not one request each), with tags, categories, metadata and
 * searchable text whose word frequencies are known:
 *   "common" in every 2nd object, "frequent" every 10th, "mid" every 100th, "rare" every 10,000th,
 *   plus 1,000 filler words spread evenly (each in ~0.1% of objects).
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { loadConfig } from "../app/config.ts";
import { systemClock } from "../domain/core/clock.ts";
import { createOrganization } from "../domain/access/organizations.ts";
import { writeObjectLabels } from "../domain/labels/object-labels.ts";
import { writeSearchRows } from "../domain/search/index-rows.ts";

export async function seed(db: Db, n: number): Promise<{ orgId: string; bucketId: string }> {
  const orgId = crypto.randomUUID();
  await db.transaction(async (tx) => {
    await createOrganization({ config: loadConfig({}), clock: systemClock }, tx, { id: orgId, name: "Bench" });
  });
  const bucketId = crypto.randomUUID();
  await db.execute(sql`insert into buckets (id, org_id, name) values (${bucketId}, ${orgId}, 'bench')`);
  await db.execute(sql`insert into tags (org_id, name, slug) select ${orgId}, 'tag ' || i, 'tag-' || i from generate_series(0, 49) i`);
  await db.execute(sql`insert into categories (org_id, name, slug) select ${orgId}, 'cat ' || i, 'cat-' || i from generate_series(0, 19) i`);
  const step = 100_000;
  for (let start = 0; start < n; start += step) {
    const end = Math.min(n, start + step) - 1;
    await db.execute(sql`
      insert into media_objects (id, org_id, bucket_id, key, size, content_type, kind, metadata, created_at, updated_at)
      select gen_random_uuid(), ${orgId}, ${bucketId},
        'photos/' || (case when i % 2 = 0 then 'common-' else '' end) || (case when i % 10 = 0 then 'frequent-' else '' end)
          || (case when i % 100 = 0 then 'mid-' else '' end) || (case when i % 10000 = 0 then 'rare-' else '' end)
          || 'w' || (i % 1000) || '-' || i || '.jpg',
        (i::bigint * 7919) % 10000000, 'image/jpeg',
        (array['image','video','audio','pdf','3d','other'])[1 + i % 6],
        jsonb_build_object('camera', 'cam' || (i % 37), 'note', 'shot ' || (i % 500)),
        now() - (i || ' seconds')::interval, now()
      from generate_series(${start}::int, ${end}::int) i`);
  }
  await db.execute(sql`
    insert into object_tags (org_id, object_id, tag_id)
    select o.org_id, o.id, t.id from media_objects o join tags t on t.org_id = o.org_id
    where o.org_id = ${orgId} and t.slug = 'tag-' || (abs(hashtext(o.id::text)) % 50)`);
  await db.execute(sql`
    insert into object_categories (org_id, object_id, category_id)
    select o.org_id, o.id, c.id from media_objects o join categories c on c.org_id = o.org_id
    where o.org_id = ${orgId} and c.slug = 'cat-' || (abs(hashtext(o.id::text || 'c')) % 20)`);
  await writeObjectLabels(db, sql`o.org_id = ${orgId}`);
  await writeSearchRows(db, sql`o.org_id = ${orgId}`);
  // A bulk load leaves the GIN index's pending list full, and writing the labels onto the
  // objects' rows leaves a dead version of every row, which index scans still visit (the key
  // search read 1,499 heap blocks for 500 matches); production gets both from autovacuum.
  await db.execute(sql`vacuum analyze media_search`);
  await db.execute(sql`vacuum analyze media_objects`);
  await db.execute(sql`update buckets set object_count = ${n} where id = ${bucketId}`);
  await db.execute(sql`update org_usage set object_count = ${n} where org_id = ${orgId}`);
  await db.execute(sql`analyze`);
  return { orgId, bucketId };
}

/**
 * A PostgreSQL database holding N seeded objects, reused between runs (it is named after
 * N and the schema version), so a rerun does not pay the seeding again.
 */
export async function seededDatabase(n: number): Promise<{ url: string; orgId: string; bucketId: string }> {
  const postgres = (await import("postgres")).default;
  const { openDatabase } = await import("../db/client.ts");
  const { readdirSync } = await import("node:fs");
  const adminUrl = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const migrations = readdirSync(new URL("../db/migrations", import.meta.url)).filter((f) => f.endsWith(".sql")).length;
  const name = `media_bench_${n}_m${migrations}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const exists = (await admin`select 1 from pg_database where datname = ${name}`).length > 0;
  if (!exists) await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString(), dataDir: "unused" });
  try {
    // Seeding writes the object count last, so a seeding that was cut short is not reused. The
    // bucket's count, not the organization's: a scenario may add objects in another bucket of
    // the organization (neighbours) without spoiling the database for the next run. Up to 2% more
    // are allowed: the peer scenario adds its target and its uploads to the bucket itself, and an
    // exact count made every later run seed another organization into the same database.
    const found = await database.db.execute(
      sql`select o.id as "orgId", b.id as "bucketId" from organizations o join buckets b on b.org_id = o.id where o.name = 'Bench' and b.name = 'bench' and b.object_count between ${n} and ${n + Math.max(100, n / 50)} order by o.created_at limit 1`,
    );
    const rows = (Array.isArray(found) ? found : (found as { rows: unknown[] }).rows) as { orgId: string; bucketId: string }[];
    if (rows[0]) return { url: url.toString(), ...rows[0] };
    const started = performance.now();
    console.error(`seeding ${n.toLocaleString("en-US")} objects into ${name} (once; reused by later runs)...`);
    const seeded = await seed(database.db, n);
    console.error(`seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    return { url: url.toString(), ...seeded };
  } finally {
    await database.close();
  }
}

export function percentiles(samples: number[]): { p50: number; p95: number; p99: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
  return { p50: at(50), p95: at(95), p99: at(99) };
}

export async function timeIt(iterations: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < Math.min(10, iterations); i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

/**
 * The embedded default's database (PGlite) holding N seeded objects, made once under
 * bench/.work and reused (named after N and the schema version): a run copies it into a
 * DATA_DIR of its own (`<DATA_DIR>/db`). The organization gets 20 GiB of room above what it
 * uses, for the scenario's own uploads. seed.json, written last, marks a finished seeding.
 */
export async function seededDataDir(n: number): Promise<{ dir: string; orgId: string; bucketId: string }> {
  const { existsSync, readdirSync, rmSync, writeFileSync, readFileSync } = await import("node:fs");
  const { openDatabase } = await import("../db/client.ts");
  const migrations = readdirSync(new URL("../db/migrations", import.meta.url)).filter((f) => f.endsWith(".sql")).length;
  const dir = new URL(`./.work/pglite-bench-${n}-m${migrations}`, import.meta.url).pathname;
  const marker = `${dir}/seed.json`;
  if (existsSync(marker)) return { dir, ...(JSON.parse(readFileSync(marker, "utf8")) as { orgId: string; bucketId: string }) };
  rmSync(dir, { recursive: true, force: true });
  const started = performance.now();
  console.error(`seeding ${n.toLocaleString("en-US")} objects into the embedded database ${dir} (once; reused by later runs)...`);
  const database = await openDatabase({ dataDir: dir });
  try {
    const seeded = await seed(database.db, n);
    await database.db.execute(sql`update org_usage set allocated_storage = used_storage + reserved_storage + ${20 * 1024 ** 3} where org_id = ${seeded.orgId}`);
    await database.db.execute(sql`checkpoint`);
    writeFileSync(marker, JSON.stringify(seeded));
    console.error(`seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    return { dir, ...seeded };
  } finally {
    await database.close();
  }
}
