/**
 * `npx bun bench/guards.ts [--write]` (with the bench runner: `npm run bench -- guards`).
 *
 * What the guards (authentication + rate limit + Idempotency-Key) add to a route, on real
 * PostgreSQL and Redis. This process serves the same tool routes twice: through the real app
 * with every guard, and bare (the caller fixed in advance, no authentication, no guard).
 * Target: <= 0.5 ms added at p50.
 *
 * 1. Latency (the target): a client in a separate process (bench/_guards-client.ts) sends
 *    requests one at a time, alternating bare and guarded request by request, so load from
 *    other work on this machine falls on both alike; "added" is the median of the paired
 *    differences.
 * 2. Under load (for information): wrk with BENCH_CONNECTIONS connections, alternating rounds.
 *
 * Environment: BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/postgres; a database is
 * created and dropped), BENCH_REDIS_URL (redis://127.0.0.1:6379; keys under a fresh prefix,
 * deleted after), BENCH_REQUESTS per side and route (5000), BENCH_SECONDS per wrk round (5),
 * BENCH_ROUNDS (3), BENCH_CONNECTIONS ("8"; "" skips wrk). --write replaces
 * bench/results/guards.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, getPriority, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { Elysia } from "elysia";
import Redis from "ioredis";
import postgres from "postgres";
import { loadConfig } from "../app/config.ts";
import { createServices } from "../app/services.ts";
import { authenticate } from "../domain/access/auth.ts";
import { bootstrap } from "../domain/access/identity.ts";
import { gcraParams } from "../domain/guards/rate-limit.ts";
import { createApp } from "../http/server.ts";
import { createGuards } from "../http/guards/index.ts";
import { errorResponse } from "../http/respond.ts";
import type { HttpContext } from "../http/pipeline.ts";
import { routerPath, runToolOverHttp } from "../rest/routes.ts";
import { toAppError } from "../tools/failure.ts";
import { findTool } from "../tools/registry.ts";
import { deleteRedisPrefix, PG_URL, REDIS_URL, writeSection } from "./_load.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 5000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? "8").split(",").filter(Boolean).map(Number);
const write = process.argv.includes("--write");

const wrk = Bun.which("wrk");
if (CONNECTIONS.length > 0 && !wrk) {
  console.error("wrk is needed for the under-load rows: apt-get install -y wrk (or BENCH_CONNECTIONS= to skip them)");
  process.exit(2);
}

let runs = 0;
const runId = `${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
const dbName = `media_bench_${runId}`;
const prefix = `mbench-${runId}`;
const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${dbName}`);
// Commits without waiting for the WAL flush: the route's own fsync on this shared disk varies by
// milliseconds, which would drown the fraction of a millisecond being measured. Both sides alike.
await admin.unsafe(`alter database ${dbName} set synchronous_commit = off`);
const pgVersion = `PostgreSQL ${(await admin.unsafe("show server_version"))[0]!.server_version}`;
const redisVersion = await (async () => {
  const r = new Redis(REDIS_URL);
  const info = await r.info("server");
  r.disconnect();
  return /redis_version:(\S+)/.exec(info)?.[1] ?? "?";
})();
const dbUrl = new URL(PG_URL);
dbUrl.pathname = `/${dbName}`;
const dataDir = mkdtempSync(join(tmpdir(), "media-bench-"));
const secret = [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("");

const config = loadConfig({
  DATABASE_URL: dbUrl.toString(),
  REDIS_URL,
  REDIS_PREFIX: prefix,
  DATA_DIR: dataDir,
  STORAGE_PORT: "0",
  LOG_LEVEL: "warn",
  // The limiter does all its work but never refuses during the run.
  RATE_LIMIT_PER_MINUTE: "1000000000",
});
const services = await createServices(config);
const { deps } = services;

interface Lat {
  p50: number;
  p95: number;
  p99: number;
}
interface Row {
  route: string;
  guards: string;
  bare: Lat;
  guarded: Lat;
  added: number;
  /** Added by the Redis round trips alone (PING), paired with bare like `added`. */
  floor?: number;
  rps?: { bare: number; guarded: number };
}

try {
  if (services.backends.guards !== "redis") throw new Error("the benchmark needs Redis");
  await bootstrap(deps, secret);
  const caller = await authenticate(deps, `Bearer ${secret}`);
  const auth = `Bearer ${secret}`;

  // The real app, every guard on.
  const guarded = createApp({ deps, ...createGuards(deps, services.guardStores) }).listen({ hostname: "127.0.0.1", port: 0 });

  // The same tool routes with the caller fixed: what createApp's serve() does, minus the guards.
  // With `floor`, the guards' Redis traffic without their work: a PING before the tool, and for
  // a keyed POST a second PING after it, not awaited (as the guards keep a response). What a
  // design that shares state through Redis cannot go below.
  const bareServer = (floor: boolean) => {
    const app = new Elysia();
    const redis = services.redis!.client;
    for (const name of ["buckets_create", "buckets_get"]) {
      const tool = findTool(name)!;
      app.route(
        tool.http.method,
        routerPath(tool.http.path),
        async ({ request, params }) => {
          const ctx: HttpContext = { request, url: new URL(request.url), requestId: crypto.randomUUID(), caller, clientAddress: null, responseHeaders: new Headers() };
          let response: Response;
          try {
            if (floor) await redis.ping();
            response = await runToolOverHttp(tool, deps, params as Record<string, string>)(ctx);
            if (floor && request.method === "POST") void redis.ping();
          } catch (err) {
            response = errorResponse(toAppError(err, deps.log, ctx.requestId), ctx.requestId);
          }
          response.headers.set("x-request-id", ctx.requestId);
          return response;
        },
        { parse: "none" },
      );
    }
    return app.listen({ hostname: "127.0.0.1", port: 0 });
  };
  const bare = bareServer(false);
  const floor = bareServer(true);
  const targets = { bare: `http://127.0.0.1:${bare.server!.port}`, guarded: `http://127.0.0.1:${guarded.server!.port}` };

  const target = await (await fetch(`${targets.guarded}/api/buckets`, { method: "POST", headers: { authorization: auth }, body: '{"name":"bench-target"}' })).json();
  const scenarios = [
    { route: "POST /api/buckets, a new Idempotency-Key each", guards: "auth + rate limit + idempotency (claim, keep)", mode: "post" as const, path: "/api/buckets" },
    { route: "GET /api/buckets/{id}", guards: "auth + rate limit (GET ignores the key)", mode: "get" as const, path: `/api/buckets/${target.id}` },
  ];

  const loadBefore = loadavg()[0]!;
  const components = await measureComponents(secret);
  const rows: Row[] = [];
  for (const s of scenarios) {
    const all = { ...targets, floor: `http://127.0.0.1:${floor.server!.port}` };
    const { bare: b, guarded: g, floor: fl } = await runClient({ targets: all, mode: s.mode, path: s.path, auth, requests: REQUESTS, warmup: 500, tag: tag() });
    const paired = (xs: number[]) => percentile(xs.map((x, i) => x - b![i]!), 50);
    const row: Row = { route: s.route, guards: s.guards, bare: percentiles(b!), guarded: percentiles(g!), added: paired(g!), floor: paired(fl!) };
    process.stderr.write(`${s.mode}: bare p50 ${f(row.bare.p50)} guarded p50 ${f(row.guarded.p50)} added ${f(row.added)} ms, Redis floor ${f(row.floor!)} ms\n`);
    rows.push(row);
  }
  const underLoad: (Row & { connections: number })[] = [];
  for (const s of scenarios) {
    for (const c of CONNECTIONS) {
      const script = s.mode === "post" ? postScript(auth) : getScript(auth, s.path);
      for (const url of Object.values(targets)) await runWrk(url, script, c, 2);
      const r: Record<"bare" | "guarded", (Lat & { rps: number })[]> = { bare: [], guarded: [] };
      for (let i = 0; i < ROUNDS; i++) {
        for (const side of (i % 2 === 0 ? ["bare", "guarded"] : ["guarded", "bare"]) as ("bare" | "guarded")[]) r[side].push(await runWrk(targets[side], script, c, SECONDS));
      }
      const med = (xs: (Lat & { rps: number })[]) => ({ p50: median(xs.map((x) => x.p50)), p95: median(xs.map((x) => x.p95)), p99: median(xs.map((x) => x.p99)) });
      underLoad.push({
        route: s.route,
        guards: s.guards,
        connections: c,
        bare: med(r.bare),
        guarded: med(r.guarded),
        added: median(r.guarded.map((x, i) => x.p50 - r.bare[i]!.p50)),
        rps: { bare: median(r.bare.map((x) => x.rps)), guarded: median(r.guarded.map((x) => x.rps)) },
      });
    }
  }

  await guarded.stop(true);
  await bare.stop(true);
  await floor.stop(true);
  const section = report(rows, underLoad, components, [loadBefore, loadavg()[0]!]);
  process.stdout.write(`${section}\n`);
  if (write) writeSection("guards", section);
} finally {
  await services.close();
  await admin.unsafe(`drop database if exists ${dbName} with (force)`).catch(() => {});
  await admin.end();
  await deleteRedisPrefix(prefix);
  rmSync(dataDir, { recursive: true, force: true });
}

function tag(): string {
  return `b${runId.replace(/\W/g, "")}-${++runs}`;
}

async function runClient(job: object): Promise<Record<string, number[]>> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "_guards-client.ts")], {
    env: { ...process.env, BENCH_CLIENT: JSON.stringify(job) },
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("the benchmark client failed");
  return JSON.parse(out);
}

function postScript(auth: string): string {
  // Each wrk thread has its own Lua state; names and keys are unique per run and thread.
  return `
local n = 0
local tag = os.getenv("BENCH_TAG")
function request()
  n = n + 1
  local id = tag .. "-" .. n
  return wrk.format("POST", "/api/buckets", { ["authorization"] = "${auth}", ["content-type"] = "application/json", ["idempotency-key"] = id }, '{"name":"' .. id .. '"}')
end
${doneScript()}`;
}

function getScript(auth: string, path: string): string {
  return `
function request()
  return wrk.format("GET", "${path}", { ["authorization"] = "${auth}" })
end
${doneScript()}`;
}

function doneScript(): string {
  return `
function done(summary, latency, requests)
  io.write(string.format("RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration, latency:percentile(50), latency:percentile(95), latency:percentile(99), summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end`;
}

async function runWrk(url: string, script: string, connections: number, seconds: number): Promise<Lat & { rps: number }> {
  const file = join(dataDir, "bench.lua");
  writeFileSync(file, script);
  const proc = Bun.spawn([wrk!, "-t1", `-c${connections}`, `-d${seconds}s`, "-s", file, url], {
    env: { ...process.env, BENCH_TAG: tag() },
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const m = /RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(out);
  if (!m) throw new Error(`wrk gave no result:\n${out}`);
  const [, requests, durationUs, p50, p95, p99, errors] = m.map(Number) as number[];
  if (errors! > 0) throw new Error(`${errors} failed requests against ${url}:\n${out}`);
  return { p50: p50! / 1000, p95: p95! / 1000, p99: p99! / 1000, rps: requests! / (durationUs! / 1e6) };
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
function percentiles(xs: number[]): Lat {
  return { p50: percentile(xs, 50), p95: percentile(xs, 95), p99: percentile(xs, 99) };
}
function median(xs: number[]): number {
  return percentile(xs, 50);
}

/** Each guard's store work on its own, sequentially in this process: where the added time goes. */
async function measureComponents(secret: string) {
  const time = async (fn: () => Promise<unknown>) => {
    for (let i = 0; i < 300; i++) await fn();
    const t: number[] = [];
    for (let i = 0; i < 3000; i++) {
      const s = performance.now();
      await fn();
      t.push(performance.now() - s);
    }
    return median(t);
  };
  const params = gcraParams({ limit: 1_000_000_000, windowMs: 60_000 });
  const { rateLimit, idempotency, takeAll } = services.guardStores;
  // One bucket and an Idempotency-Key claim in one script.
  const takeAndBegin = (key: string, nowUs: number, p: typeof params, claim: Parameters<typeof takeAll>[2]) => takeAll([{ key, params: p }], nowUs, claim);
  const redis = services.redis!.client;
  // Time Redis itself spends per script call (INFO commandstats; other clients' EVALSHA calls
  // during the measurement would be counted too).
  const insideRedis = async (fn: () => Promise<unknown>) => {
    const read = async () => {
      const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await redis.info("commandstats"));
      return m ? [Number(m[1]), Number(m[2])] : [0, 0];
    };
    const [c0, u0] = await read();
    for (let i = 0; i < 3000; i++) await fn();
    const [c1, u1] = await read();
    return (u1! - u0!) / Math.max(1, c1! - c0!) / 1000;
  };
  let seq = 0;
  return {
    takeInsideRedis: await insideRedis(() => rateLimit.take("bench", Date.now() * 1000, params)),
    takeAndBeginInsideRedis: await insideRedis(() =>
      takeAndBegin("bench", Date.now() * 1000, params, { id: `bench-${runId}-${seq++}`, owner: "o", nowMs: Date.now(), leaseMs: 60_000 }),
    ),
    authenticate: await time(() => authenticate(deps, `Bearer ${secret}`)),
    rateLimitTake: await time(() => rateLimit.take("bench", Date.now() * 1000, params)),
    takeAndBegin: await time(() => takeAndBegin("bench", Date.now() * 1000, params, { id: `bench-${runId}-${seq++}`, owner: "o", nowMs: Date.now(), leaseMs: 60_000 })),
    complete: await time(() => idempotency.complete(`bench-${runId}-${seq++}`, "o", "x".repeat(300), Date.now(), 86_400_000)),
    redisPing: await time(() => services.redis!.client.ping()),
    pgSelect1: await time(() => deps.db.execute("select 1" as never)),
  };
}

function report(rows: Row[], underLoad: (Row & { connections: number })[], comp: Awaited<ReturnType<typeof measureComponents>>, load: number[]): string {
  const date = new Date().toISOString().slice(0, 10);
  const full = rows[0]!;
  const lat = (l: Lat) => `${f(l.p50)} / ${f(l.p95)} / ${f(l.p99)}`;
  const lines = [
    "## guards — what authentication, rate limit and idempotency add to a route",
    "",
    "`npx bun bench/guards.ts --write`. One process serves the same tool routes twice on real PostgreSQL and",
    "Redis: through the real app with every guard, and bare (the caller fixed in advance, no",
    "authentication, no guard). A client in a separate process sends requests one at a time,",
    `going round bare, guarded and a third server request by request (${REQUESTS} each after 500 of warm-up), so`,
    "load from other work on this shared machine falls on all alike. \"Added\" is the median of the paired",
    "differences with bare. The third server is bare plus the guards' Redis traffic without their work (a",
    "PING before the tool; for the POST a second one after it, not awaited): the floor for any design that",
    "shares its state through Redis with one round trip per request.",
    "The bench database commits without waiting for the WAL flush (`synchronous_commit = off`) on both",
    "sides: the route's own fsync would otherwise drown what is measured.",
    "",
    `Date ${date}; ${cpus().length} vCPU ${cpus()[0]?.model ?? ""}, ${Math.round(totalmem() / 2 ** 30)} GiB; Bun ${Bun.version}, ${pgVersion}, Redis ${redisVersion}.`,
    `Load average (1 min) ${load[0]!.toFixed(1)} at the start, ${load[1]!.toFixed(1)} at the end: other work was running on this machine.` +
      (getPriority() < 0 ? ` The benchmark ran at nice ${getPriority()} (server, client and wrk ahead of that other work; PostgreSQL and Redis at their usual priority).` : ""),
    "",
    "| route | guards | bare p50 / p95 / p99 (ms) | guarded p50 / p95 / p99 (ms) | added p50 (ms) | the same Redis round trips as PINGs (ms) |",
    "|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.route} | ${r.guards} | ${lat(r.bare)} | ${lat(r.guarded)} | **${f(r.added)}** | ${f(r.floor!)} |`),
    "",
    `Target: the full set (first row) adds <= 0.5 ms at p50 — measured ${f(full.added)} ms: **${full.added <= 0.5 ? "met" : "missed"}**.`,
    "",
    `Where the time goes (median of 3000 sequential calls in the server process): authenticating a remembered`,
    `API key ${f(comp.authenticate)} ms (a PostgreSQL \`select 1\` alone: ${f(comp.pgSelect1)} ms); the rate limit script ${f(comp.rateLimitTake)} ms, or`,
    `${f(comp.takeAndBegin)} ms with the idempotency claim in the same script (Redis PING alone: ${f(comp.redisPing)} ms); keeping the`,
    `response ${f(comp.complete)} ms, sent without waiting for the reply. Inside Redis (INFO commandstats) a rate limit script`,
    `takes ${f(comp.takeInsideRedis)} ms and the combined one ${f(comp.takeAndBeginInsideRedis)} ms of its CPU. So a guarded request costs one Redis`,
    "round trip before the tool, keyed or not, plus microseconds of hashing and sealing in the server.",
    ...(full.added > 0.5
      ? [
          "",
          `Why the target is missed here: the PING column is what the Redis round trips alone add on this machine (${f(full.floor!)} ms`,
          `for the POST); the guards add ${f(full.added - full.floor!)} ms beyond it: the Lua scripts (their CPU inside Redis is above) and the`,
          "second, not awaited, write of a keyed request, on a machine whose load average left each process a fraction",
          "of a core. Not measured on a quiet machine: none was available while this was built.",
        ]
      : []),
    "",
    "How it got there: the first version added 1.9 ms at p50 (POST) and 1.1 ms (GET) in this",
    "benchmark. The API key lookup cost ~0.5 ms per request through Drizzle, and a keyed request made three",
    "Redis round trips in a row (count, claim, keep). Now keys are remembered (`app/credential-cache.ts`,",
    "invalidated on every instance on rotate, delete and bucket deletion), the claim rides in the rate",
    "limit's script, and keeping the response is not awaited.",
  ];
  if (underLoad.length > 0) {
    lines.push(
      "",
      `Under load (for information; wrk 4.1.0, 1 thread, ${ROUNDS} alternating rounds of ${SECONDS} s, medians): on 2 vCPUs shared with`,
      "PostgreSQL, Redis and wrk, the extra Redis work shows as throughput.",
      "",
      "| route | connections | bare p50 / p95 / p99 (ms) | guarded p50 / p95 / p99 (ms) | added p50 (ms) | req/s bare / guarded |",
      "|---|---|---|---|---|---|",
      ...underLoad.map((r) => `| ${r.route} | ${r.connections} | ${lat(r.bare)} | ${lat(r.guarded)} | ${f(r.added)} | ${Math.round(r.rps!.bare)} / ${Math.round(r.rps!.guarded)} |`),
    );
  }
  return lines.join("\n");
}

function f(x: number): string {
  return x.toFixed(3);
}
