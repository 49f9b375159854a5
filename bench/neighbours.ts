/**
 * `npm run bench -- neighbours`: how much one organization's worst load slows another's
 * requests (2026 attack run). Org A (the seeded "Bench" organization, 100,000 objects) runs what its
 * limits allow, through several API keys at once: costly searches (4 prefixes, 8 alternatives:
 * the most the query bounds accept), uncached on-the-fly renders of a 24 MP picture, uploads,
 * and set generations. Org B meanwhile presigns, gets and lists at a fixed rate (open loop,
 * latency from each request's scheduled start). B's p99 under A's load is compared with B's
 * quiet p99 on the same server; the target is at most 2x.
 *
 * Servers, one after the other, on the same seeded database (NEIGHBOURS_CONFIGS picks them):
 * "unbounded" (no organization cap, no per-organization concurrency caps or search budget, no
 * statement timeouts: main before the attack run's fixes, but for the set generation limits,
 * which are constants), "bounded-inprocess" (the limits,
 * pictures decoded in the server process: WORKER_NICE 0), "bounded" (the defaults: pictures
 * decoded in child processes at WORKER_NICE 10), each a real `npm start` (PostgreSQL, Redis,
 * inline BullMQ worker, embedded storage node) in a process of its own; and "apart", the
 * defaults in the production layout (packaging/compose.yaml: storage node, API with
 * WORKER_INLINE=false and `npm run worker` in three processes); "packaged" (not run unless
 * asked; needs root): the production layout with every part in a CPU cgroup of its own, as a
 * container runtime or systemd runs them, weighted as NEIGHBOURS_SHARES says (JSON of v1
 * shares per part: postgres, redis, storage, media, worker), this machine's PostgreSQL and
 * Redis moved into theirs for the run. The server CPU reported is the
 * API process's. Every server process starts in a session of its own (OWN_SESSION), as a service
 * manager or a container runtime starts it: with Linux's autogroups the CPU is shared between
 * sessions first, and a server in the bench's session would share one share with the clients
 * that stand in for other machines.
 *
 * BENCH_N objects (default 100000), NEIGHBOURS_SECONDS per phase (default 30),
 * NEIGHBOURS_RATE requests per second per B route (default 8: at 4 a p99 was one of about 100
 * samples per phase, so a single stall decided it), NEIGHBOURS_CONFIGS (default
 * "unbounded,bounded,apart"), NEIGHBOURS_ENV (JSON: server settings added to each), NEIGHBOURS_LOADS (org A's loads, default all four:
 * "search,render,upload,generate"), BENCH_WRITE=1 writes bench/RESULTS.md.
 */
import { mkdirSync, rmSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import postgres from "postgres";
import sharp from "sharp";
import { cpuSeconds, deleteRedisPrefix, OWN_SESSION, REDIS_URL, runFixedRate, startTarget, stopOnExit, writeSection, type Target } from "./_load.ts";
import { seededDatabase } from "./_seed.ts";
import { cpuGroups, cpuGroupsUnavailable, pidsNamed } from "./_cgroups.ts";

const N = Number(process.env.BENCH_N ?? 100_000);
const SECONDS = Number(process.env.NEIGHBOURS_SECONDS ?? 30);
const RATE = Number(process.env.NEIGHBOURS_RATE ?? 8);
const CONFIGS = (process.env.NEIGHBOURS_CONFIGS ?? "unbounded,bounded,apart").split(",");
/** Rounds over every configuration, interleaved: on a shared machine the load moves under a run. */
const REPEAT = Number(process.env.NEIGHBOURS_REPEAT ?? 1);
/** Which of org A's loads run (to tell which one slows B): search, render, upload, generate. */
const LOADS = new Set((process.env.NEIGHBOURS_LOADS ?? "search,render,upload,generate").split(","));
/** Server settings added to every configuration (JSON), to try a limit without a new configuration. */
const EXTRA_ENV = JSON.parse(process.env.NEIGHBOURS_ENV ?? "{}") as Record<string, string>;
const JWT_SECRET = "bench-secret-bench-secret";
const ADMIN_SECRET = "b".repeat(64);

const configs: Record<string, Record<string, string>> = {
  // What main had before the attack run's fixes: a per-credential limit only, nothing per organization.
  unbounded: {
    ORG_RATE_LIMIT_PER_MINUTE: "100000000",
    ORG_SEARCH_MS_PER_SECOND: "0",
    ORG_RENDER_MS_PER_SECOND: "0",
    ORG_MAX_SEARCHES: "1000",
    ORG_MAX_RENDERS: "1000",
    DB_STATEMENT_TIMEOUT_MS: "0",
    SEARCH_STATEMENT_TIMEOUT_MS: "0",
  },
  // The limits, with set renditions rendered in the worker process itself.
  "bounded-inprocess": { WORKER_NICE: "0" },
  bounded: {},
  // The defaults with picture work niced only, not in the idle scheduling class.
  "bounded-niced": { WORKER_SCHED_IDLE: "false" },
  // The defaults with one search and one render at a time per organization (a 2-core host).
  "bounded-1": { ORG_MAX_SEARCHES: "1", ORG_MAX_RENDERS: "1" },
  // The defaults in the production layout (packaging/compose.yaml): the storage node, the API
  // and the worker each in a process of its own, on the same machine.
  apart: {},
  // The production layout with every part in a CPU cgroup, weighted as packaging/compose.yaml
  // weighs the services (cpu_shares: the worker 128, the others the default 1024). Needs root
  // (bench/_cgroups.ts).
  packaged: {},
};
/** Configurations that run the storage node and the worker apart from the API (see `apart`). */
const APART = new Set(["apart", "packaged"]);
/** packaging/compose.yaml's cpu_shares per service (1024 where it sets none); NEIGHBOURS_SHARES (JSON) overrides some. */
const PACKAGED_SHARES = { postgres: 1024, redis: 1024, storage: 1024, media: 1024, worker: 128, ...JSON.parse(process.env.NEIGHBOURS_SHARES ?? "{}") } as Record<"postgres" | "redis" | "storage" | "media" | "worker", number>;
if (CONFIGS.includes("packaged")) {
  const why = cpuGroupsUnavailable();
  if (why) {
    console.error(`[neighbours] packaged needs CPU cgroups: ${why}`);
    process.exit(2);
  }
}

/** The storage node in a process of its own (storage/local-s3/main.ts); resolves once it answers. */
async function storageNode(dataDir: string, prefix: string[] = []): Promise<{ env: Record<string, string>; stop: () => Promise<void> }> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const creds = { S3_ACCESS_KEY_ID: "neighbours", S3_SECRET_ACCESS_KEY: "neighbours-secret-neighbours-secret" };
  const proc = Bun.spawn([...prefix, ...OWN_SESSION, process.execPath, join(import.meta.dir, "../storage/local-s3/main.ts")], {
    env: { ...process.env, ...creds, STORAGE_PORT: String(port), DATA_DIR: join(dataDir, "storage") },
    stdout: "ignore",
    stderr: "ignore",
  });
  for (let i = 0; i < 100; i++) {
    if (await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)) break;
    await Bun.sleep(100);
  }
  return {
    env: { ...creds, S3_ENDPOINT: `http://127.0.0.1:${port}` },
    stop: async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** A worker process (worker/main.ts) on the same database, queue and storage as the API. */
function workerProcess(env: Record<string, string>, prefix: string[] = []): { pid: number; stop: () => Promise<void> } {
  const proc = Bun.spawn([...prefix, ...OWN_SESSION, process.execPath, join(import.meta.dir, "../worker/main.ts")], { env: { ...process.env, ...env }, stdout: "ignore", stderr: "inherit" });
  return {
    pid: proc.pid,
    stop: async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

const seeded = await seededDatabase(N);
const jwtFor = (orgId: string, sub = crypto.randomUUID()) =>
  new SignJWT({ sub, org_id: orgId, org_name: "Neighbour" }).setProtectedHeader({ alg: "HS256" }).setExpirationTime("2h").sign(new TextEncoder().encode(JWT_SECRET));

type Json = Record<string, any>;
async function call(base: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {} };
}

async function uploadTo(base: string, token: string, bucketId: string, key: string, bytes: Uint8Array<ArrayBuffer>, contentType: string) {
  const p = await call(base, token, "POST", "/api/presign/upload", { bucketId, key, contentType, size: bytes.byteLength });
  if (p.status !== 200) return p.status;
  const put = await fetch(p.body.url, { method: "PUT", headers: p.body.headers, body: bytes });
  await put.arrayBuffer();
  if (put.status !== 200) return put.status;
  const c = await call(base, token, "POST", "/api/presign/confirm", { bucketId, key });
  return c.status === 200 ? (c.body.id as string) : c.status;
}

/** A smooth 6000x4000 JPEG (24 MP, a few MB): decoding and resizing it is real work. */
async function bigPicture(): Promise<Uint8Array<ArrayBuffer>> {
  const w = 60;
  const h = 40;
  const raw = Buffer.alloc(w * h * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 7919) % 251;
  return new Uint8Array(await sharp(raw, { raw: { width: w, height: h, channels: 3 } }).resize(6000, 4000, { kernel: "cubic" }).jpeg({ quality: 90 }).toBuffer());
}

interface Phase {
  presign: { p50: number; p99: number; errors: number };
  get: { p50: number; p99: number; errors: number };
  list: { p50: number; p99: number; errors: number };
  /** GET /healthz (no credential, no database): how long the API process itself takes to answer. */
  healthz: { p50: number; p99: number; errors: number };
}

/**
 * B's three routes at RATE each, each on a fresh key of its own: B stays within its own
 * limits (300 a minute per key, a burst of 300), so every answer is a real one, never a 429.
 */
async function measureB(base: string, b: { jwt: string; bucketId: string; objectId: string }, tag: string, seconds = SECONDS): Promise<Phase> {
  const key = async () => (await call(base, b.jwt, "POST", "/api/api-keys", { name: `quiet ${tag}`, scopes: ["read", "write"] })).body.secret as string;
  const headersOf = async () => ({ authorization: `Bearer ${await key()}`, "content-type": "application/json" });
  const [h1, h2, h3] = [await headersOf(), await headersOf(), await headersOf()];
  const [presign, get, list, healthz] = await Promise.all([
    runFixedRate({ url: `${base}/api/presign/upload`, method: "POST", headers: h1, body: JSON.stringify({ bucketId: b.bucketId, key: "n/{n}.bin", size: 100, contentType: "application/octet-stream" }), rate: RATE, seconds, tag: `${tag}-p` }),
    runFixedRate({ url: `${base}/api/media/${b.objectId}`, method: "GET", headers: h2, rate: RATE, seconds, tag: `${tag}-g` }),
    runFixedRate({ url: `${base}/api/media?bucketId=${b.bucketId}&limit=50`, method: "GET", headers: h3, rate: RATE, seconds, tag: `${tag}-l` }),
    runFixedRate({ url: `${base}/healthz`, method: "GET", headers: {}, rate: RATE, seconds, tag: `${tag}-h` }),
  ]);
  const pick = (r: { p50: number; p99: number; errors: number }) => ({ p50: r.p50, p99: r.p99, errors: r.errors });
  return { presign: pick(presign), get: pick(get), list: pick(list), healthz: pick(healthz) };
}

/** Org A's load until `until`; returns the statuses it got, per kind of request. */
async function noisy(base: string, a: { keys: string[]; bucketId: string; bigId: string; setId: string }, until: number) {
  const statuses: Record<string, Record<number, number>> = {};
  const count = (kind: string, status: number) => {
    statuses[kind] ??= {};
    statuses[kind][status] = (statuses[kind][status] ?? 0) + 1;
  };
  let k = 0;
  const key = () => a.keys[k++ % a.keys.length]!;
  const loop = async (kind: string, once: () => Promise<number>) => {
    while (Date.now() < until) {
      const status = await once().catch(() => 599);
      count(kind, status);
      // A refused client backs off as Retry-After asks (at least a little): the worst a
      // well-behaved attacker does. One that ignores it only collects cheap 429s.
      if (status === 429) await Bun.sleep(200);
    }
  };
  const q = encodeURIComponent("co* OR fr* OR mi* OR w1* OR common OR frequent OR mid OR rare");
  const mib = new Uint8Array(1024 * 1024).fill(3);
  let n = 0;
  await Promise.all([
    ...Array.from({ length: LOADS.has("search") ? 8 : 0 }, () => loop("search", async () => (await call(base, key(), "GET", `/api/search?q=${q}&limit=50`)).status)),
    ...Array.from({ length: LOADS.has("render") ? 4 : 0 }, () =>
      loop("render", async () => {
        const width = 200 + Math.floor(Math.random() * 3800);
        const res = await fetch(`${base}/api/media/${a.bigId}/render?width=${width}&format=webp`, { headers: { authorization: `Bearer ${key()}` } });
        await res.arrayBuffer();
        return res.status;
      }),
    ),
    ...Array.from({ length: LOADS.has("upload") ? 2 : 0 }, () =>
      loop("upload", async () => {
        const r = await uploadTo(base, key(), a.bucketId, `noise/${Date.now()}-${n++}.bin`, mib, "application/octet-stream");
        return typeof r === "string" ? 200 : r;
      }),
    ),
    ...(LOADS.has("generate") ? [0] : []).map(() => loop("generate", async () => {
      const status = (await call(base, key(), "POST", `/api/sets/${a.setId}/generate`)).status;
      await Bun.sleep(1000);
      return status;
    })),
  ]);
  return statuses;
}

interface Outcome {
  config: string;
  quiet: Phase;
  loaded: Phase;
  load: { quiet: number[]; loaded: number[] };
  statuses: Record<string, Record<number, number>>;
  serverCpu: number;
}

/** The servers of the configuration running now: in sessions of their own, so stopped here if the bench is interrupted. */
const running = new Set<{ stop: () => Promise<void> }>();
stopOnExit(() => Promise.all([...running].map((p) => p.stop())));

async function runConfig(name: string): Promise<Outcome> {
  const prefix = `mbench-neighbours-${name}-${Date.now()}`;
  const dataDir = join(import.meta.dir, ".work", prefix);
  mkdirSync(dataDir, { recursive: true });
  let app: Target | null = null;
  const apart: { stop: () => Promise<void> }[] = [];
  // packaged: each part in a CPU group of compose's weight; PostgreSQL's and Redis' running
  // processes (this machine's) are moved into theirs for the run and back after it.
  const weighted = name === "packaged" ? cpuGroups(PACKAGED_SHARES) : null;
  const group = (part: keyof typeof PACKAGED_SHARES) => weighted?.groups[part]!.prefix ?? [];
  if (weighted) running.add({ stop: async () => weighted.release() });
  weighted?.groups.postgres!.adopt(pidsNamed("postgres"));
  weighted?.groups.redis!.adopt(pidsNamed("redis-server"));
  try {
    let env: Record<string, string> = { DATABASE_URL: seeded.url, REDIS_URL, REDIS_PREFIX: prefix, JWT_SECRET, LOG_LEVEL: "error", DATA_DIR: dataDir, STORAGE_PORT: "0", ...configs[name], ...EXTRA_ENV };
    if (APART.has(name)) {
      const node = await storageNode(dataDir, group("storage"));
      apart.push(node);
      env = { ...env, ...node.env, WORKER_INLINE: "false" };
      apart.push(workerProcess(env, group("worker")));
    }
    for (const p of apart) running.add(p);
    app = await startTarget({ mode: "app", secret: ADMIN_SECRET, env }, { ownSession: true, prefix: group("media") });
    running.add(app);
    const base = app.url;
    // Org A: the seeded organization, its bucket of 100,000 objects, five API keys.
    const aJwt = await jwtFor(seeded.orgId);
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) keys.push((await call(base, aJwt, "POST", "/api/api-keys", { name: `noisy ${i}`, scopes: ["read", "write"] })).body.secret);
    // A's own uploads go to a bucket of their own: the seeded bucket stays as seeded, for reuse.
    const noiseBucket = (await call(base, keys[0]!, "POST", "/api/buckets", { name: `noise-${Date.now()}` })).body.id as string;
    const big = await uploadTo(base, keys[0]!, noiseBucket, `big-${Date.now()}.jpg`, await bigPicture(), "image/jpeg");
    if (typeof big !== "string") throw new Error(`uploading the big picture failed: ${big}`);
    // The hourly budget of set generations is counted from the job outbox, and the seeded
    // organization is reused by every run: each run starts with the budget whole.
    const admin = postgres(seeded.url, { max: 1, onnotice: () => {} });
    await admin`delete from job_outbox where name = 'sets.generate' and payload->>'orgId' = ${seeded.orgId}`;
    // A's uploads stay (the seeded database is reused): keep room for the next run's, and for
    // the other scenarios that share the database (growth presigns into it).
    await admin`update org_usage set allocated_storage = used_storage + reserved_storage + ${20 * 1024 ** 3} where org_id = ${seeded.orgId}`;
    await admin.end();
    const set = (await call(base, keys[0]!, "POST", "/api/sets", { name: "noisy", baseObjectId: big })).body;
    for (let i = 0; i < 4; i++) await call(base, keys[0]!, "POST", `/api/sets/${set.id}/items`, { aspectRatio: "8:5", width: 4000, height: 2500, role: `r${i}` });
    // Org B: a new organization with a bucket of 60 small objects and one read/write key.
    const bOrg = crypto.randomUUID();
    const bJwt = await jwtFor(bOrg);
    const bSecret = (await call(base, bJwt, "POST", "/api/api-keys", { name: "quiet", scopes: ["read", "write"] })).body.secret as string;
    const bBucket = (await call(base, bSecret, "POST", "/api/buckets", { name: "quiet" })).body.id as string;
    let bObject = "";
    for (let i = 0; i < 60; i++) {
      const id = await uploadTo(base, bSecret, bBucket, `files/f-${i}.txt`, new TextEncoder().encode(`file ${i}`), "text/plain");
      if (typeof id === "string") bObject ||= id;
    }
    const b = { jwt: bJwt, bucketId: bBucket, objectId: bObject };
    // Warm-up (first statements, JIT), then the quiet baseline.
    await measureB(base, b, `${name}-warm`, 5).catch(() => {});
    await Bun.sleep(2000);
    const quietLoad = [loadavg()[0]!];
    const quiet = await measureB(base, b, `${name}-quiet`);
    quietLoad.push(loadavg()[0]!);

    const cpu0 = cpuSeconds(app.pid);
    const until = Date.now() + SECONDS * 1000 + 6000;
    const noise = noisy(base, { keys, bucketId: noiseBucket, bigId: big, setId: set.id }, until);
    // A's load gets a few seconds to build up before B is measured.
    await Bun.sleep(3000);
    const loadedLoad = [loadavg()[0]!];
    const loaded = await measureB(base, b, `${name}-loaded`);
    loadedLoad.push(loadavg()[0]!);
    const statuses = await noise;
    const serverCpu = cpuSeconds(app.pid) - cpu0;
    return { config: name, quiet, loaded, load: { quiet: quietLoad, loaded: loadedLoad }, statuses, serverCpu };
  } finally {
    await app?.stop();
    for (const p of apart) await p.stop();
    running.clear();
    weighted?.release();
    rmSync(dataDir, { recursive: true, force: true });
    await deleteRedisPrefix(prefix);
  }
}

const outcomes: (Outcome & { round: number })[] = [];
const startLoad = loadavg().map((l) => l.toFixed(1)).join(" ");
for (let round = 1; round <= REPEAT; round++) {
  for (const name of CONFIGS) {
    console.error(`[neighbours] round ${round}, ${name}: quiet ${SECONDS} s, then under org A's load ${SECONDS} s (load average ${loadavg()[0]!.toFixed(1)})`);
    const o = await runConfig(name);
    outcomes.push({ ...o, config: LOADS.size < 4 ? `${name} (A: ${[...LOADS].join("+")})` : name, round });
    console.error(JSON.stringify(o));
    // Let the worker's leftovers and the machine settle between configurations.
    await Bun.sleep(5000);
  }
}

const f = (x: number) => x.toFixed(1);
const rows = outcomes.flatMap((o) =>
  (["presign", "get", "list", "healthz"] as const).map((route) => {
    const q = o.quiet[route];
    const l = o.loaded[route];
    const ratio = `${(l.p99 / q.p99).toFixed(1)}×`;
    return `| ${o.round} | ${o.config} | ${route} | ${f(q.p50)} | ${f(q.p99)} | ${f(l.p50)} | ${f(l.p99)} | ${route === "healthz" ? `(${ratio})` : `**${ratio}**`} | ${q.errors + l.errors} |`;
  }),
);
const statusLines = outcomes.map(
  (o) =>
    `- round ${o.round}, ${o.config}: ${Object.entries(o.statuses)
      .map(([kind, s]) => `${kind} ${Object.entries(s).map(([code, n]) => `${n}×${code}`).join(" ")}`)
      .join("; ")}; server CPU ${f(o.serverCpu)} s over the loaded phase; load average (1 min) quiet ${o.load.quiet.map(f).join("→")}, loaded ${o.load.loaded.map(f).join("→")}`,
);
const section = `## neighbours — one organization's worst load against another's p99 (written by \`npm run bench -- neighbours\`)

${new Date().toISOString().slice(0, 16)}Z; ${cpus().length} vCPU ${cpus()[0]?.model.trim() ?? ""}, ${Math.round(totalmem() / 2 ** 30)} GiB; load average (1, 5, 15 min) at the start ${startLoad}, at the end ${loadavg().map(f).join(" ")} (other work shares this machine).
Org A: the seeded organization (${N.toLocaleString("en-US")} objects), 5 API keys, 8 search loops (\`co* OR fr* OR mi* OR w1* OR common OR frequent OR mid OR rare\`), 4 loops of uncached renders of a 24 MP JPEG, 2 loops of 1 MiB uploads, set generation (4 items of 10 MP) every second; a refused request waits 200 ms.
Org B: presign, get and list, each at ${RATE} requests/s open loop for ${SECONDS} s; latency in ms from each request's scheduled start. Target: loaded p99 ≤ 2× quiet p99. The healthz row (no credential, no database, not a target) shows how long the API process itself takes to get to a request.

| round | config | route | quiet p50 | quiet p99 | loaded p50 | loaded p99 | p99 ratio | B errors |
|---|---|---|---|---|---|---|---|---|
${rows.join("\n")}

Org A's answers and the server's load:
${statusLines.join("\n")}
`;
console.log(section);
if (process.env.BENCH_WRITE === "1") writeSection("neighbours", section);
process.exit(0);
