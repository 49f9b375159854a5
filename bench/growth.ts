/**
 * `npm run bench -- growth`: how the operations a client makes most grow with the data. The
 * same five calls (upload URL, download URL, object metadata, list first page, search of a 1%
 * term) against organizations of 10,000, 100,000 and 1,000,000 objects (BENCH_GROWTH_SIZES;
 * each seeded once into a reusable database by bench/_seed.ts), and against one database of
 * 1,000 organizations (BENCH_GROWTH_ORGS x BENCH_GROWTH_PER_ORG objects), where each call goes
 * to a different organization in turn. Each call is timed from the client, sequentially
 * (BENCH_ITERATIONS, 200, after 10 of warm-up), through the real server in its own process on
 * PostgreSQL and Redis. The load average is recorded beside each size: on this shared machine
 * only the rows of one run compare. BENCH_NO_WRITE=1 leaves bench/results/growth.md alone.
 */
import { sql } from "drizzle-orm";
import { SignJWT } from "jose";
import { rmSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { loadConfig } from "../app/config.ts";
import { openDatabase } from "../db/client.ts";
import { createOrganization } from "../domain/access/organizations.ts";
import { systemClock } from "../domain/core/clock.ts";
import { writeSearchRows } from "../domain/search/index-rows.ts";
import { deleteRedisPrefix, int, load1, ms, PG_URL, REDIS_URL, startTarget, writeSection } from "./_load.ts";
import { percentiles, seededDatabase, timeIt } from "./_seed.ts";

const sizes = (process.env.BENCH_GROWTH_SIZES ?? "10000,100000,1000000").split(",").map(Number);
const orgCount = Number(process.env.BENCH_GROWTH_ORGS ?? 1000);
const perOrg = Number(process.env.BENCH_GROWTH_PER_ORG ?? 100);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 200);
const JWT_SECRET = "bench-secret-bench-secret";
const OPS = ["upload URL", "download URL", "metadata", "list first page", "search (1% term)"] as const;

interface Org {
  orgId: string;
  bucketId: string;
  objectId: string;
  auth: string;
}

async function jwtFor(orgId: string): Promise<string> {
  const token = await new SignJWT({ sub: crypto.randomUUID(), org_id: orgId }).setProtectedHeader({ alg: "HS256" }).setExpirationTime("2h").sign(new TextEncoder().encode(JWT_SECRET));
  return `Bearer ${token}`;
}

/** 1,000 organizations of `perOrg` objects each, in one database made for this run (dropped at the end). */
async function manyOrgs(): Promise<{ url: string; orgs: { orgId: string; bucketId: string }[]; drop(): Promise<void> }> {
  const name = `media_bench_growth_orgs_${Date.now()}`;
  const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString(), dataDir: "unused" });
  const orgs: { orgId: string; bucketId: string }[] = [];
  try {
    const deps = { config: loadConfig({}), clock: systemClock };
    for (let i = 0; i < orgCount; i++) {
      const orgId = crypto.randomUUID();
      const bucketId = crypto.randomUUID();
      await database.db.transaction(async (tx) => {
        await createOrganization(deps, tx, { id: orgId, name: `Org ${i}` });
        await tx.execute(sql`insert into buckets (id, org_id, name) values (${bucketId}, ${orgId}, 'bench')`);
      });
      orgs.push({ orgId, bucketId });
    }
    // Same key shapes as bench/_seed.ts, so "mid" is in 1% of each organization's objects.
    await database.db.execute(sql`
      insert into media_objects (id, org_id, bucket_id, key, size, content_type, kind, metadata, created_at, updated_at)
      select gen_random_uuid(), b.org_id, b.id,
        'photos/' || (case when i % 2 = 0 then 'common-' else '' end) || (case when i % 10 = 0 then 'frequent-' else '' end)
          || (case when i % 100 = 0 then 'mid-' else '' end) || 'w' || (i % 1000) || '-' || i || '.jpg',
        (i::bigint * 7919) % 10000000, 'image/jpeg', (array['image','video','audio','pdf','3d','other'])[1 + i % 6],
        jsonb_build_object('camera', 'cam' || (i % 37)), now() - (i || ' seconds')::interval, now()
      from buckets b, generate_series(0, ${perOrg - 1}::int) i`);
    await writeSearchRows(database.db, sql`true`);
    await database.db.execute(sql`update buckets set object_count = ${perOrg}`);
    await database.db.execute(sql`update org_usage set object_count = ${perOrg}`);
    await database.db.execute(sql`vacuum analyze`);
  } finally {
    await database.close();
  }
  return {
    url: url.toString(),
    orgs,
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end();
    },
  };
}

async function measure(databaseUrl: string, orgs: { orgId: string; bucketId: string }[], label: string) {
  const prefix = `mbench-growth-${Date.now()}`;
  const dataDir = join(import.meta.dir, ".work", prefix);
  mkdirSync(dataDir, { recursive: true });
  // The limits are lifted: one organization's back-to-back searches at a million objects
  // (about 45 ms each) spend more than its search time budget (ORG_SEARCH_MS_PER_SECOND), and
  // would then measure the budget's wait, not the search (152 ms p50 with it, 2026-11-27).
  const app = await startTarget({
    mode: "app",
    env: { DATABASE_URL: databaseUrl, REDIS_URL, REDIS_PREFIX: prefix, JWT_SECRET, LOG_LEVEL: "error", DATA_DIR: dataDir, STORAGE_PORT: "0", RATE_LIMIT_PER_MINUTE: "100000000", ORG_SEARCH_MS_PER_SECOND: "0" },
  });
  const pg = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    // Up to 50 organizations take turns (all of them when there is one).
    const targets: Org[] = [];
    for (const o of orgs.slice(0, 50)) {
      const [row] = await pg`select id from media_objects where org_id = ${o.orgId} and deleted_at is null limit 1`;
      targets.push({ ...o, objectId: row!.id as string, auth: await jwtFor(o.orgId) });
    }
    let turn = 0;
    const next = () => targets[turn++ % targets.length]!;
    const call = async (path: string, init: { method?: string; body?: unknown; auth: string }) => {
      const res = await fetch(`${app.url}${path}`, {
        method: init.method ?? "GET",
        headers: { authorization: init.auth, ...(init.body ? { "content-type": "application/json" } : {}) },
        ...(init.body ? { body: JSON.stringify(init.body) } : {}),
      });
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    let n = 0;
    const ops: Record<(typeof OPS)[number], () => Promise<void>> = {
      "upload URL": () => {
        const o = next();
        return call("/api/presign/upload", { method: "POST", auth: o.auth, body: { bucketId: o.bucketId, key: `growth/${Date.now()}-${n++}.jpg`, contentType: "image/jpeg", size: 1000 } });
      },
      "download URL": () => {
        const o = next();
        return call("/api/presign/download", { method: "POST", auth: o.auth, body: { objectId: o.objectId } });
      },
      metadata: () => {
        const o = next();
        return call(`/api/media/${o.objectId}`, { auth: o.auth });
      },
      "list first page": () => call("/api/media", { auth: next().auth }),
      "search (1% term)": () => call("/api/search?q=mid&limit=50", { auth: next().auth }),
    };
    const load = load1();
    const results: Record<string, { p50: number; p95: number }> = {};
    for (const op of OPS) {
      const p = percentiles(await timeIt(iterations, ops[op]));
      results[op] = p;
      process.stderr.write(`${label} ${op}: p50 ${ms(p.p50)} p95 ${ms(p.p95)} ms\n`);
    }
    return { results, load: `${load}-${load1()}` };
  } finally {
    await pg.end();
    await app.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await deleteRedisPrefix(prefix);
  }
}

const rows: string[] = [];
const started = new Date().toISOString().slice(0, 16).replace("T", " ");
for (const n of sizes) {
  const seeded = await seededDatabase(n);
  const { results, load } = await measure(seeded.url, [seeded], `${int(n)} objects`);
  rows.push(`| ${int(n)} objects, 1 organization | ${OPS.map((op) => `${ms(results[op]!.p50)} / ${ms(results[op]!.p95)}`).join(" | ")} | ${load} |`);
}
if (orgCount > 0) {
  process.stderr.write(`seeding ${orgCount} organizations of ${perOrg} objects...\n`);
  const many = await manyOrgs();
  try {
    const { results, load } = await measure(many.url, many.orgs, `${orgCount} organizations`);
    rows.push(
      `| ${int(orgCount)} organizations x ${int(perOrg)} objects (calls rotate over 50 of them) | ${OPS.map((op) => `${ms(results[op]!.p50)} / ${ms(results[op]!.p95)}`).join(" | ")} | ${load} |`,
    );
  } finally {
    await many.drop();
  }
}
const section = [
  "## growth — the same calls at 10k, 100k and 1M objects, and across 1,000 organizations",
  "",
  `\`npm run bench -- growth\`, ${started} UTC. Each call timed from the client, ${iterations} sequential requests after 10 of`,
  "warm-up, through the real server in its own process (PostgreSQL, Redis, a dashboard JWT). Objects seeded in bulk",
  "(bench/_seed.ts; \"mid\" is in 1% of them, so the search matches 100, 1,000 and 10,000). The last column is the",
  "1-minute load average at the start and end of that row: the machine is shared, so rows measured at different",
  "loads differ by more than the data explains. p50 / p95 in ms.",
  "",
  `| data | ${OPS.join(" | ")} | load |`,
  `|---|${OPS.map(() => "---").join("|")}|---|`,
  ...rows,
].join("\n");
process.stdout.write(`${section}\n`);
if (!process.env.BENCH_NO_WRITE) writeSection("growth", section);
