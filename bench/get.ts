/**
 * `npm run bench -- get`: GET /api/media/{id} end to end (API key, rate limit, the object with
 * its tags, categories and thumbnail) on real PostgreSQL and Redis, against a bare Bun.serve
 * route running the same SQL (captured from the route itself, so it is the same statements
 * with the same parameters) through postgres.js with the same pool size, measured in the same
 * run. Target: >= 50% of the bare route's requests/s.
 *
 * Environment: BENCH_OBJECTS (1000 objects requested in turn), BENCH_SECONDS per round (5),
 * BENCH_ROUNDS (3), BENCH_CONNECTIONS (16), BENCH_PG_URL, BENCH_REDIS_URL. The database and
 * Redis keys made for the run are deleted at the end. BENCH_NO_WRITE=1 leaves bench/results/get.md alone.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "../db/schema/index.ts";
import type { Db } from "../db/client.ts";
import type { Caller } from "../domain/access/caller.ts";
import type { Deps } from "../domain/core/deps.ts";
import { loadMediaView } from "../domain/media/media.ts";
import { appEnv, int, type LoadResult, load1, machine, medianOf, ms, requireWrk, runWrk, rssMiB, sampleRss, scratch, startTarget, type Target, writeSection } from "./_load.ts";

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const POOL = 10; // db/client.ts's default pool, which the server uses

requireWrk();
const s = await scratch("get");
const dataDir = join(import.meta.dir, ".work", `get-${s.runId}`);
mkdirSync(dataDir, { recursive: true });
const secret = [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("");
const auth = `Bearer ${secret}`;
const targets: Target[] = [];
const loadStart = load1();

try {
  const app = await startTarget({
    mode: "app",
    secret,
    env: appEnv(s, dataDir),
  });
  targets.push(app);
  const rssIdle = rssMiB(app.pid);
  const bucket = (await (await fetch(`${app.url}/api/buckets`, { method: "POST", headers: { authorization: auth }, body: '{"name":"bench"}' })).json()) as { id: string };

  // Objects as confirm and the worker leave them: user metadata, extracted info, two tags,
  // a category and a ready thumbnail each.
  const client = postgres(s.databaseUrl, { max: 1, onnotice: () => {} });
  const [{ id: orgId }] = (await client`select org_id as id from buckets where id = ${bucket.id}`) as unknown as [{ id: string }];
  await client`insert into tags (org_id, name, slug) select ${orgId}, 'tag ' || i, 'tag-' || i from generate_series(0, 19) i`;
  await client`insert into categories (org_id, name, slug) select ${orgId}, 'cat ' || i, 'cat-' || i from generate_series(0, 9) i`;
  await client`
    insert into media_objects (org_id, bucket_id, key, size, content_type, kind, metadata, etag, info)
    select ${orgId}, ${bucket.id}, 'photos/p' || i || '.jpg', 1000000 + i, 'image/jpeg', 'image',
      jsonb_build_object('camera', 'cam' || (i % 37), 'note', 'shot ' || i), md5(i::text),
      jsonb_build_object('width', 4000, 'height', 3000, 'exif', jsonb_build_object('Make', 'Bench', 'ISO', 100 + i % 800))
    from generate_series(1, ${OBJECTS}::int) i`;
  await client`insert into object_tags (org_id, object_id, tag_id) select o.org_id, o.id, t.id from media_objects o join tags t on t.org_id = o.org_id
    where o.org_id = ${orgId} and t.slug in ('tag-' || (abs(hashtext(o.id::text)) % 10), 'tag-' || (10 + abs(hashtext(o.key)) % 10))`;
  await client`insert into object_categories (org_id, object_id, category_id) select o.org_id, o.id, c.id from media_objects o join categories c on c.org_id = o.org_id
    where o.org_id = ${orgId} and c.slug = 'cat-' || (abs(hashtext(o.id::text)) % 10)`;
  await client`insert into derivatives (object_id, variant, state, source_etag, storage_key, content_type, size, width, height, etag, attempts)
    select id, 'thumbnail', 'ready', etag, 'derivatives/' || id || '/thumb.webp', 'image/webp', 15000, 320, 240, md5(id::text), 1 from media_objects where org_id = ${orgId}`;
  await client`analyze`;
  const ids = (await client`select id from media_objects where org_id = ${orgId} order by key`).map((r) => r.id as string);

  // The route's SQL, captured by running the route's own domain function on a logging Drizzle.
  const queries: { sql: string; params: unknown[] }[] = [];
  const logging = drizzle(client, { schema, logger: { logQuery: (q, params) => void queries.push({ sql: q, params }) } }) as unknown as Db;
  const caller = { orgId, userId: "bench", apiKeyId: null, scopes: new Set(["admin"]), bucketId: null, principal: "bench" } as Caller;
  await loadMediaView({ db: logging } as Deps, caller, ids[0]!);
  const bare = await startTarget({ mode: "sql", databaseUrl: s.databaseUrl, poolSize: POOL, queries, idParam: ids[0] });
  targets.push(bare);
  await client.end();

  for (const [name, t] of [["app", app], ["bare", bare]] as const) {
    const res = await fetch(`${t.url}/api/media/${ids[1]}`, { headers: { authorization: auth } });
    if (res.status !== 200) throw new Error(`${name} answered ${res.status}: ${await res.text()}`);
  }

  const lua = `
local ids = { ${ids.map((id) => `"${id}"`).join(", ")} }
local n = 0
function request()
  n = n + 1
  return wrk.format("GET", "/api/media/" .. ids[(n % #ids) + 1], { ["authorization"] = "${auth}" })
end`;
  const peaks: number[] = [];
  const run = async (who: "app" | "bare", seconds: number) => {
    const t = who === "app" ? app : bare;
    const rss = sampleRss(app.pid);
    try {
      return await runWrk(t.url, lua, CONNECTIONS, seconds, who, t.pid);
    } finally {
      if (who === "app") peaks.push(rss.stop().peak);
      else rss.stop();
    }
  };
  process.stderr.write("warm-up...\n");
  await run("app", 3);
  await run("bare", 3);
  const runs: Record<"app" | "bare", LoadResult[]> = { app: [], bare: [] };
  for (let i = 0; i < ROUNDS; i++) {
    for (const who of (i % 2 === 0 ? ["bare", "app"] : ["app", "bare"]) as ("app" | "bare")[]) {
      const r = await run(who, SECONDS);
      process.stderr.write(`round ${i + 1} ${who}: ${int(r.rps)} req/s, p50 ${ms(r.p50)} p99 ${ms(r.p99)} ms\n`);
      runs[who].push(r);
    }
  }
  const med = { app: medianOf(runs.app), bare: medianOf(runs.bare) };
  const ratio = med.app.rps / med.bare.rps;
  const lat = (r: LoadResult) => `${ms(r.p50)} / ${ms(r.p95)} / ${ms(r.p99)}`;
  const each = (xs: LoadResult[]) => xs.map((x) => int(x.rps)).join(", ");
  const section = [
    "## get — GET /api/media/{id}",
    "",
    "`npm run bench -- get`. The real server (createServices + createHttpApp, as `npm start`) on",
    `PostgreSQL and Redis, in a process of its own, serving ${int(OBJECTS)} objects (metadata, extracted info, two`,
    "tags, a category, a ready thumbnail each) requested in turn with the admin API key: authentication,",
    "rate limit (one Redis script), the object, its labels and its thumbnail, the view. Baseline in the",
    "same run, in its own process: a bare `Bun.serve` route running the same SQL (the statements the",
    "route sent, captured through Drizzle's logger, with the requested id) through postgres.js with the",
    `same pool size (${POOL}), ${queries.length === 1 ? "one statement, as the route sends it" : `the first alone and the other ${queries.length - 1} together as the route does`}, answering the rows`,
    `as JSON. wrk, 1 thread, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s alternating after a warm-up; medians.`,
    "",
    `Date ${machine(s.versions)}. Load average (1 min) ${loadStart} at the start, ${load1()} at the end.`,
    "",
    "| contender | req/s (median) | rounds (req/s) | p50 / p95 / p99 (ms) | server CPU ms per request | server RSS (MiB) |",
    "|---|---:|---|---|---:|---|",
    `| bare \`Bun.serve\`, same SQL | ${int(med.bare.rps)} | ${each(runs.bare)} | ${lat(med.bare)} | ${med.bare.cpuMs!.toFixed(3)} | |`,
    `| GET /api/media/{id} | ${int(med.app.rps)} | ${each(runs.app)} | ${lat(med.app)} | ${med.app.cpuMs!.toFixed(3)} | idle ${rssIdle.toFixed(0)}, peak under load ${Math.max(...peaks).toFixed(0)} |`,
    "",
    `Target: >= 50% of the bare route — measured **${(ratio * 100).toFixed(0)}%: ${ratio >= 0.5 ? "met" : "missed"}**.`,
  ].join("\n");
  process.stdout.write(`${section}\n`);
  if (!process.env.BENCH_NO_WRITE) writeSection("get", section);
} finally {
  for (const t of targets) await t.stop().catch(() => {});
  await s.drop();
  rmSync(dataDir, { recursive: true, force: true });
}
