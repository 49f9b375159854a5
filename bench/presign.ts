/**
 * `npm run bench -- presign`: POST /api/presign/upload end to end (API key, scope, rate limit,
 * Idempotency-Key, bucket check, quota reservation, signing) on real PostgreSQL and Redis with
 * the embedded storage node, against two baselines measured in the same run:
 *   - a bare Bun.serve route answering the same JSON (the HTTP ceiling), and
 *   - a bare loop doing the same database work and Redis round trip (bench/_presign-loop.ts).
 * Target: >= 25% of the bare route's requests/s, or, when the database write is the floor,
 * >= 80% of the bare loop's; p99 <= 10 ms at half the maximum rate. The server's RSS is
 * sampled throughout.
 *
 * Each server runs in a process of its own (bench/_target.ts); wrk (one thread) drives the
 * maximum-rate rounds, which go round the three contenders in rotating order; then a
 * fixed-rate open-loop client (bench/_rate-client.ts) runs at half the median maximum.
 *
 * Environment: BENCH_SECONDS per round (5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (16: wrk's
 * connections and the loop's concurrency), BENCH_FIXED_SECONDS (10), BENCH_PG_URL,
 * BENCH_REDIS_URL. The database and Redis keys made for the run are deleted at the end.
 * BENCH_NO_WRITE=1 leaves bench/results/presign.md alone.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import {
  appEnv,
  int,
  type LoadResult,
  load1,
  machine,
  medianOf,
  ms,
  REDIS_URL,
  requireWrk,
  runFixedRate,
  runWrk,
  rssMiB,
  sampleRss,
  scratch,
  startTarget,
  type Target,
  writeSection,
} from "./_load.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const FIXED_SECONDS = Number(process.env.BENCH_FIXED_SECONDS ?? 10);
const POOL = 10; // db/client.ts's default pool, which the server uses

requireWrk();
const s = await scratch("presign");
const dataDir = join(import.meta.dir, ".work", `presign-${s.runId}`);
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
  const db = postgres(s.databaseUrl, { max: 1, onnotice: () => {} });
  const [{ id: orgId }] = (await db`select org_id as id from buckets where id = ${bucket.id}`) as unknown as [{ id: string }];
  const bodyOf = (n: string) => JSON.stringify({ bucketId: bucket.id, key: `bench/${n}.jpg`, contentType: "image/jpeg", size: 1000 });
  const sample = await fetch(`${app.url}/api/presign/upload`, {
    method: "POST",
    headers: { authorization: auth, "content-type": "application/json", "idempotency-key": "sample" },
    body: bodyOf("sample"),
  });
  if (sample.status !== 200) throw new Error(`presign answered ${sample.status}: ${await sample.text()}`);
  const json = await sample.text();
  const bare = await startTarget({ mode: "json", body: json });
  targets.push(bare);

  const lua = `
local n = 0
local tag = os.getenv("BENCH_TAG")
function request()
  n = n + 1
  local id = tag .. "-" .. n
  return wrk.format("POST", "/api/presign/upload", { ["authorization"] = "${auth}", ["content-type"] = "application/json", ["idempotency-key"] = id },
    '{"bucketId":"${bucket.id}","key":"bench/' .. id .. '.jpg","contentType":"image/jpeg","size":1000}')
end`;
  let loops = 0;
  const loop = async (seconds: number, warmupSeconds: number): Promise<LoadResult> => {
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "_presign-loop.ts")], {
      env: {
        ...process.env,
        BENCH_LOOP: JSON.stringify({ databaseUrl: s.databaseUrl, redisUrl: REDIS_URL, prefix: s.prefix, orgId, bucketId: bucket.id, concurrency: CONNECTIONS, seconds, warmupSeconds, poolSize: POOL, tag: `loop${++loops}` }),
      },
      stdout: "pipe",
      stderr: "inherit",
    });
    const out = await new Response(proc.stdout).text();
    if ((await proc.exited) !== 0) throw new Error("the bare loop failed");
    return JSON.parse(out);
  };

  const peaks: number[] = [];
  const onApp = async <T>(fn: () => Promise<T>): Promise<T> => {
    const rss = sampleRss(app.pid);
    try {
      return await fn();
    } finally {
      peaks.push(rss.stop().peak);
    }
  };
  process.stderr.write("warm-up...\n");
  await onApp(() => runWrk(app.url, lua, CONNECTIONS, 3, "warm"));
  await runWrk(bare.url, lua, CONNECTIONS, 2, "warm");
  await loop(1, 1);

  const runs: Record<"bare" | "app" | "loop", LoadResult[]> = { bare: [], app: [], loop: [] };
  const order = ["bare", "app", "loop"] as const;
  for (let i = 0; i < ROUNDS; i++) {
    for (let k = 0; k < order.length; k++) {
      const who = order[(i + k) % order.length]!;
      const r =
        who === "loop" ? await loop(SECONDS, 1) : who === "app" ? await onApp(() => runWrk(app.url, lua, CONNECTIONS, SECONDS, "app", app.pid)) : await runWrk(bare.url, lua, CONNECTIONS, SECONDS, "bare", bare.pid);
      process.stderr.write(`round ${i + 1} ${who}: ${int(r.rps)} req/s, p50 ${ms(r.p50)} p99 ${ms(r.p99)} ms\n`);
      runs[who].push(r);
    }
  }
  const med = { bare: medianOf(runs.bare), app: medianOf(runs.app), loop: medianOf(runs.loop) };
  const rssMax = Math.max(...peaks);

  const rate = Math.max(1, Math.round(med.app.rps / 2));
  process.stderr.write(`fixed rate ${rate}/s for ${FIXED_SECONDS} s...\n`);
  const fixedRss = sampleRss(app.pid);
  const fixed = await runFixedRate({
    url: `${app.url}/api/presign/upload`,
    method: "POST",
    headers: { authorization: auth, "content-type": "application/json", "idempotency-key": "{n}" },
    body: bodyOf("{n}"),
    rate,
    seconds: FIXED_SECONDS,
    tag: `fixed-${s.runId}`,
  });
  const fixedPeak = fixedRss.stop().peak;
  if (fixed.errors > 0) throw new Error(`${fixed.errors} failed requests at the fixed rate`);
  // The same client and rate against the bare route: the tail this machine adds to anything.
  const fixedBare = await runFixedRate({
    url: `${bare.url}/api/presign/upload`,
    method: "POST",
    headers: { authorization: auth, "content-type": "application/json", "idempotency-key": "{n}" },
    body: bodyOf("{n}"),
    rate,
    seconds: FIXED_SECONDS,
    tag: `fixed-bare-${s.runId}`,
  });
  const rssAfter = rssMiB(app.pid);
  const reservations = Number((await db`select count(*)::int as n from upload_reservations`)[0]!.n);
  await db.end();

  const vsBare = med.app.rps / med.bare.rps;
  const vsLoop = med.app.rps / med.loop.rps;
  const throughputMet = vsBare >= 0.25 || vsLoop >= 0.8;
  const p99Met = fixed.p99 <= 10;
  const load = `${loadStart} at the start, ${load1()} at the end`;
  const lat = (r: LoadResult) => `${ms(r.p50)} / ${ms(r.p95)} / ${ms(r.p99)}`;
  const cpu = (r: LoadResult) => (r.cpuMs === undefined ? "" : r.cpuMs.toFixed(3));
  const each = (xs: LoadResult[]) => xs.map((x) => int(x.rps)).join(", ");
  const section = [
    "## presign — POST /api/presign/upload end to end",
    "",
    "`npm run bench -- presign`. The real server (createServices + createHttpApp, as `npm start`) on",
    "PostgreSQL and Redis with the embedded storage node, in a process of its own; every request",
    "carries the admin API key, a new Idempotency-Key and a new object key, and reserves 1000 bytes:",
    "authentication, scope, rate limit + idempotency claim (one Redis script), bucket check (prepared),",
    "reservation (the quota UPDATE on the organization's usage row and the INSERT, one statement committed",
    "without waiting for the WAL flush), signing, and keeping the response for the key (not awaited).",
    "Baselines in the same run, each in its own",
    `process: a bare \`Bun.serve\` route that reads the body and answers the same JSON, and a bare loop`,
    "(`bench/_presign-loop.ts`) doing the same database work and the Redis round trip (the guards'",
    `script) with the app's pool size (${POOL}) and as many loops as wrk has connections. Max rate: wrk,`,
    `1 thread, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s going round the three in rotating order after a`,
    "warm-up; medians. Then an open-loop client at a fixed rate of half the median maximum for",
    `${FIXED_SECONDS} s (latency counted from each request's scheduled start, so stalls are not hidden).`,
    "",
    `Date ${machine(s.versions)}. Load average (1 min) ${load}: other work was running on this machine.`,
    "",
    "| contender | req/s (median) | rounds (req/s) | p50 / p95 / p99 (ms) | CPU ms per request, its own process | app's req/s as % of it |",
    "|---|---:|---|---|---:|---:|",
    `| bare \`Bun.serve\`, same JSON | ${int(med.bare.rps)} | ${each(runs.bare)} | ${lat(med.bare)} | ${cpu(med.bare)} | **${(vsBare * 100).toFixed(0)}%** |`,
    `| bare loop, same DB write + Redis round trip | ${int(med.loop.rps)} | ${each(runs.loop)} | ${lat(med.loop)} | ${cpu(med.loop)} | **${(vsLoop * 100).toFixed(0)}%** |`,
    `| POST /api/presign/upload | ${int(med.app.rps)} | ${each(runs.app)} | ${lat(med.app)} | ${cpu(med.app)} | |`,
    "",
    `| fixed rate (half the max) | target | achieved req/s | p50 / p95 / p99 (ms) |`,
    "|---:|---|---:|---|",
    `| ${int(rate)}/s | POST /api/presign/upload | ${int(fixed.rps)} | ${ms(fixed.p50)} / ${ms(fixed.p95)} / **${ms(fixed.p99)}** |`,
    `| ${int(rate)}/s | bare \`Bun.serve\`, same JSON (control: the tail this machine adds) | ${int(fixedBare.rps)} | ${ms(fixedBare.p50)} / ${ms(fixedBare.p95)} / ${ms(fixedBare.p99)} |`,
    "",
    `Server RSS (MiB): ${rssIdle.toFixed(0)} idle after start-up, peak ${rssMax.toFixed(0)} under the maximum-rate rounds, peak ${fixedPeak.toFixed(0)} at the fixed rate, ${rssAfter.toFixed(0)} after.`,
    "",
    `Reservations written during the run: ${int(reservations)}.`,
    "",
    `Targets: throughput >= 25% of the bare route (measured ${(vsBare * 100).toFixed(0)}%) or >= 80% of the bare loop when the`,
    `database is the floor (measured ${(vsLoop * 100).toFixed(0)}%) — **${throughputMet ? "met" : "missed"}**; p99 <= 10 ms at half the maximum rate`,
    `(measured ${ms(fixed.p99)} ms at ${int(rate)}/s) — **${p99Met ? "met" : "missed"}**.`,
  ].join("\n");
  process.stdout.write(`${section}\n`);
  if (!process.env.BENCH_NO_WRITE) writeSection("presign", section);
} finally {
  for (const t of targets) await t.stop().catch(() => {});
  await s.drop();
  rmSync(dataDir, { recursive: true, force: true });
}
