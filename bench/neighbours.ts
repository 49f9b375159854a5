/**
 * `npm run bench -- neighbours`: how much one organization's worst load slows another's
 * requests and thumbnails. Org A (a seeded "Bench" organization, 100,000 objects) runs what
 * its limits allow, through several API keys at once: costly searches (4 prefixes, 8
 * alternatives: the most the query bounds accept), uncached on-the-fly renders of a 24 MP
 * picture, uploads of that picture (each a thumbnail job), set generations, imports from a
 * server that trickles one byte every 2 s, and 20 webhook endpoints that never answer,
 * subscribed to bucket.created while A creates buckets. Org B meanwhile presigns, gets and
 * lists at a fixed rate (open loop, latency from each request's scheduled start) and uploads a
 * 2 MP JPEG every few seconds, timing confirm → thumbnail `ready`. Each of B's numbers under
 * A's load is compared with B's quiet number on the same server. Targets:
 *   - B's p99 on presign, get and list ≤ max(2× quiet p99, quiet p99 + 25 ms) (a bare 2× is a
 *     test of the VM's noise when the quiet p99 is a few ms);
 *   - B's slowest thumbnail ≤ 2× its quiet median + 5 s.
 *
 * Servers, one after the other (NEIGHBOURS_CONFIGS picks them; each a real server in a process
 * and a session of its own):
 * "embedded" (the embedded default: PGlite, the in-process queue and worker, the embedded
 * storage node; its database a copy of a seeded PGlite directory); "bounded" (PostgreSQL,
 * Redis, an inline BullMQ worker, the embedded storage node); "unbounded" (that, without the
 * per-organization limits and statement timeouts: main before the 2026 attack run's fixes);
 * "bounded-inprocess", "bounded-niced", "bounded-1" (variations of a limit); "apart", the
 * production layout (packaging/compose.yaml: storage node, API with WORKER_INLINE=false and
 * `npm run worker` in three processes); "packaged" (not run unless asked; needs root): the
 * production layout with every part in a CPU cgroup of its own, as a container runtime or
 * systemd runs them, weighted as NEIGHBOURS_SHARES says (JSON of v1 shares per part:
 * postgres, redis, storage, media, worker), this machine's PostgreSQL and Redis moved into
 * theirs for the run. The server CPU reported is the API process's. Every server process
 * starts in a session of its own (OWN_SESSION), as a service manager or a container runtime
 * starts it: with Linux's autogroups the CPU is shared between sessions first, and a server in
 * the bench's session would share one share with the clients that stand in for other machines.
 *
 * BENCH_N objects (default 100000), NEIGHBOURS_SECONDS per phase (default 30),
 * NEIGHBOURS_RATE requests per second per B route (default 8: at 4 a p99 was one of about 100
 * samples per phase, so a single stall decided it), NEIGHBOURS_CONFIGS (default
 * "embedded,apart"), NEIGHBOURS_REPEAT rounds (default 2), NEIGHBOURS_ENV (JSON: server
 * settings added to each), NEIGHBOURS_LOADS (org A's loads, default all six:
 * "search,render,upload,generate,import,webhook"), BENCH_WRITE=1 writes bench/results/neighbours.md.
 */
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import postgres from "postgres";
import sharp from "sharp";
import { cpuSeconds, deleteRedisPrefix, median, OWN_SESSION, REDIS_URL, runFixedRate, startTarget, stopOnExit, writeSection, type Target } from "./_load.ts";
import { seededDatabase, seededDataDir } from "./_seed.ts";
import { startTrickler } from "../test/support/trickle.ts";
import { startReceiver } from "../test/support/webhook-receiver.ts";
import { cpuGroups, cpuGroupsUnavailable, pidsNamed } from "./_cgroups.ts";

const N = Number(process.env.BENCH_N ?? 100_000);
const SECONDS = Number(process.env.NEIGHBOURS_SECONDS ?? 30);
const RATE = Number(process.env.NEIGHBOURS_RATE ?? 8);
const CONFIGS = (process.env.NEIGHBOURS_CONFIGS ?? "embedded,apart").split(",");
/** Rounds over every configuration, interleaved: on a shared machine the load moves under a run. */
const REPEAT = Number(process.env.NEIGHBOURS_REPEAT ?? 2);
const ALL_LOADS = ["search", "render", "upload", "generate", "import", "webhook"];
/** Which of org A's loads run (to tell which one slows B). */
const LOADS = new Set((process.env.NEIGHBOURS_LOADS ?? ALL_LOADS.join(",")).split(","));
/** How often B uploads a picture and times its thumbnail, in each phase. */
const THUMB_EVERY_MS = 3000;
/** Server settings added to every configuration (JSON), to try a limit without a new configuration. */
const EXTRA_ENV = JSON.parse(process.env.NEIGHBOURS_ENV ?? "{}") as Record<string, string>;
const JWT_SECRET = "bench-secret-bench-secret";
const ADMIN_SECRET = "b".repeat(64);

const configs: Record<string, Record<string, string>> = {
  // The embedded default: no DATABASE_URL, no REDIS_URL (see EMBEDDED).
  embedded: {},
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
/** Configurations on the embedded default (PGlite, in-process queue): no PostgreSQL, no Redis. */
const EMBEDDED = new Set(["embedded"]);
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

/** Org A's seeded database, made (or found) only for the kinds of configuration this run has. */
const seeded = CONFIGS.some((c) => !EMBEDDED.has(c)) ? await seededDatabase(N) : null;
const seededEmbedded = CONFIGS.some((c) => EMBEDDED.has(c)) ? await seededDataDir(N) : null;
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

/** B's pictures: distinct 1600x1200 JPEGs (2 MP, a phone photo's thumbnail work), so no answer is a cached one. */
async function photos(n: number): Promise<Uint8Array<ArrayBuffer>[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, k) => {
      const raw = Buffer.alloc(40 * 30 * 3);
      for (let i = 0; i < raw.length; i++) raw[i] = (i * 131 + k * 977) % 253;
      return new Uint8Array(await sharp(raw, { raw: { width: 40, height: 30, channels: 3 } }).resize(1600, 1200, { kernel: "cubic" }).jpeg({ quality: 85 }).toBuffer());
    }),
  );
}

interface Latency {
  p50: number;
  p99: number;
  errors: number;
}

interface Phase {
  presign: Latency;
  get: Latency;
  list: Latency;
  /** GET /healthz (no credential, no database): how long the API process itself takes to answer. */
  healthz: Latency;
  /** B's thumbnails, confirm → `ready`, in ms (a thumbnail that failed or never came counts as an error). */
  thumbs: { times: number[]; errors: number };
}

/**
 * B's pictures: one every THUMB_EVERY_MS (open loop: a slow one does not delay the next),
 * each timed from its confirm's answer to the first GET that shows its thumbnail `ready`
 * (polled every 250 ms, through keys of its own so B stays within its per-key limit).
 */
async function thumbsOfB(base: string, b: { jwt: string; bucketId: string; pictures: Uint8Array<ArrayBuffer>[] }, tag: string, seconds: number) {
  const key = async () => (await call(base, b.jwt, "POST", "/api/api-keys", { name: `thumbs ${tag}`, scopes: ["read", "write"] })).body.secret as string;
  const uploader = await key();
  const pollers = [await key(), await key(), await key(), await key()];
  let polls = 0;
  const times: number[] = [];
  let errors = 0;
  const one = async (n: number) => {
    const id = await uploadTo(base, uploader, b.bucketId, `thumbs/${tag}-${n}.jpg`, b.pictures[n % b.pictures.length]!, "image/jpeg");
    if (typeof id !== "string") return void errors++;
    const confirmed = performance.now();
    // A thumbnail later than 120 s is an error: the phase would not see it anyway.
    while (performance.now() - confirmed < 120_000) {
      await Bun.sleep(250);
      const got = await call(base, pollers[polls++ % pollers.length]!, "GET", `/api/media/${id}`);
      const state = got.body.thumbnail?.state;
      if (state === "ready") return void times.push(performance.now() - confirmed);
      if (state === "failed" || got.status !== 200) break;
    }
    errors++;
  };
  const started: Promise<void>[] = [];
  for (let n = 0; n * THUMB_EVERY_MS < seconds * 1000; n++) {
    started.push(one(n));
    await Bun.sleep(THUMB_EVERY_MS);
  }
  await Promise.all(started);
  return { times, errors };
}

/**
 * B's three routes at RATE each, each on a fresh key of its own: B stays within its own
 * limits (300 a minute per key, a burst of 300), so every answer is a real one, never a 429;
 * and B's thumbnails alongside.
 */
async function measureB(base: string, b: { jwt: string; bucketId: string; objectId: string; pictures: Uint8Array<ArrayBuffer>[] }, tag: string, seconds = SECONDS): Promise<Phase> {
  const key = async () => (await call(base, b.jwt, "POST", "/api/api-keys", { name: `quiet ${tag}`, scopes: ["read", "write"] })).body.secret as string;
  const headersOf = async () => ({ authorization: `Bearer ${await key()}`, "content-type": "application/json" });
  const [h1, h2, h3] = [await headersOf(), await headersOf(), await headersOf()];
  const [presign, get, list, healthz, thumbs] = await Promise.all([
    runFixedRate({ url: `${base}/api/presign/upload`, method: "POST", headers: h1, body: JSON.stringify({ bucketId: b.bucketId, key: "n/{n}.bin", size: 100, contentType: "application/octet-stream" }), rate: RATE, seconds, tag: `${tag}-p` }),
    runFixedRate({ url: `${base}/api/media/${b.objectId}`, method: "GET", headers: h2, rate: RATE, seconds, tag: `${tag}-g` }),
    runFixedRate({ url: `${base}/api/media?bucketId=${b.bucketId}&limit=50`, method: "GET", headers: h3, rate: RATE, seconds, tag: `${tag}-l` }),
    runFixedRate({ url: `${base}/healthz`, method: "GET", headers: {}, rate: RATE, seconds, tag: `${tag}-h` }),
    thumbsOfB(base, b, tag, seconds),
  ]);
  const pick = (r: Latency) => ({ p50: r.p50, p99: r.p99, errors: r.errors });
  return { presign: pick(presign), get: pick(get), list: pick(list), healthz: pick(healthz), thumbs };
}

/** The slow remote ends A points its imports and webhooks at, in this process. */
interface Remotes {
  trickle: string;
  hang: string;
}

/** Org A's load until `until`; returns the statuses it got, per kind of request. */
async function noisy(base: string, a: { keys: string[]; bucketId: string; bigId: string; big: Uint8Array<ArrayBuffer>; setId: string; remotes: Remotes }, until: number) {
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
      // A refusal that is not a rate limit (403 quota, 409 a limit of the kind) waits a second.
      else if (status >= 400) await Bun.sleep(1000);
    }
  };
  const q = encodeURIComponent("co* OR fr* OR mi* OR w1* OR common OR frequent OR mid OR rare");
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
    // The 24 MP picture, again and again: every upload is a thumbnail job of the heaviest kind
    // in the CPU class, far more than the worker can keep up with.
    ...Array.from({ length: LOADS.has("upload") ? 2 : 0 }, () =>
      loop("upload", async () => {
        const r = await uploadTo(base, key(), a.bucketId, `noise/${Date.now()}-${n++}.jpg`, a.big, "image/jpeg");
        return typeof r === "string" ? 200 : r;
      }),
    ),
    ...(LOADS.has("generate") ? [0] : []).map(() => loop("generate", async () => {
      const status = (await call(base, key(), "POST", `/api/sets/${a.setId}/generate`)).status;
      await Bun.sleep(1000);
      return status;
    })),
    // Imports without a size from a server that trickles: each holds a network slot until the
    // byte-rate floor stops it, and counts UPLOAD_UNSIZED_MAX_BYTES against A's unconfirmed bytes.
    ...Array.from({ length: LOADS.has("import") ? 4 : 0 }, () =>
      loop("import", async () => {
        const res = await call(base, key(), "POST", "/api/imports", { bucketId: a.bucketId, key: `imports/${Date.now()}-${n++}.bin`, url: a.remotes.trickle, contentType: "application/octet-stream" });
        await Bun.sleep(500);
        return res.status;
      }),
    ),
    // Every bucket A creates is 20 deliveries (bucket.created) to endpoints that never answer;
    // it is deleted again so the organization's bucket count stays where it was.
    ...(LOADS.has("webhook") ? [0] : []).map(() =>
      loop("webhook", async () => {
        const made = await call(base, key(), "POST", "/api/buckets", { name: `hooked-${Date.now()}-${n++}` });
        if (made.status === 201) await call(base, key(), "DELETE", `/api/buckets/${made.body.id}`);
        await Bun.sleep(500);
        return made.status;
      }),
    ),
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

/** The slow remote ends, shared by every configuration: a trickle of one byte every 2 s, and a server that never answers. */
const trickler = startTrickler(2000);
const hanging = startReceiver();
hanging.respond = () => ({ hang: true });
const remotes: Remotes = { trickle: trickler.url(), hang: hanging.url };
const pictures = await photos(12);

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
    // A's imports and webhooks go to loopback servers of this process.
    const common = { JWT_SECRET, LOG_LEVEL: "error", DATA_DIR: dataDir, STORAGE_PORT: "0", IMPORT_ALLOW_PRIVATE: "true", WEBHOOK_ALLOW_PRIVATE: "true" };
    let env: Record<string, string>;
    let a: { orgId: string };
    if (EMBEDDED.has(name)) {
      // A copy of the seeded PGlite directory where the embedded default keeps its database.
      cpSync(seededEmbedded!.dir, join(dataDir, "db"), { recursive: true });
      env = { ...common, ...configs[name], ...EXTRA_ENV };
      a = seededEmbedded!;
    } else {
      env = { ...common, DATABASE_URL: seeded!.url, REDIS_URL, REDIS_PREFIX: prefix, ...configs[name], ...EXTRA_ENV };
      a = seeded!;
      // The hourly budget of set generations is counted from the job outbox, and the seeded
      // organization is reused by every run: each run starts with the budget whole.
      const admin = postgres(seeded!.url, { max: 1, onnotice: () => {} });
      await admin`delete from job_outbox where name = 'sets.generate' and payload->>'orgId' = ${seeded!.orgId}`;
      // A's webhook endpoints of an earlier run (an organization may have 20): this run makes its own.
      await admin`delete from webhook_endpoints where org_id = ${seeded!.orgId}`;
      // A's uploads stay (the seeded database is reused): keep room for the next run's, and for
      // the other scenarios that share the database (growth presigns into it).
      await admin`update org_usage set allocated_storage = used_storage + reserved_storage + ${20 * 1024 ** 3} where org_id = ${seeded!.orgId}`;
      await admin.end();
    }
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
    const aJwt = await jwtFor(a.orgId);
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) keys.push((await call(base, aJwt, "POST", "/api/api-keys", { name: `noisy ${i}`, scopes: ["read", "write", "admin"] })).body.secret);
    // A's own uploads go to a bucket of their own: the seeded bucket stays as seeded, for reuse.
    const noiseBucket = (await call(base, keys[0]!, "POST", "/api/buckets", { name: `noise-${Date.now()}` })).body.id as string;
    const bigBytes = await bigPicture();
    const big = await uploadTo(base, keys[0]!, noiseBucket, `big-${Date.now()}.jpg`, bigBytes, "image/jpeg");
    if (typeof big !== "string") throw new Error(`uploading the big picture failed: ${big}`);
    const set = (await call(base, keys[0]!, "POST", "/api/sets", { name: "noisy", baseObjectId: big })).body;
    for (let i = 0; i < 4; i++) await call(base, keys[0]!, "POST", `/api/sets/${set.id}/items`, { aspectRatio: "8:5", width: 4000, height: 2500, role: `r${i}` });
    // A's 20 endpoints (the most an organization may have), each sent every bucket.created.
    if (LOADS.has("webhook")) {
      for (let i = 0; i < 20; i++) {
        const made = await call(base, keys[0]!, "POST", "/api/webhooks", { url: `${remotes.hang}/${i}`, eventTypes: ["bucket.created"] });
        if (made.status !== 201) throw new Error(`creating a webhook endpoint failed: ${made.status} ${JSON.stringify(made.body)}`);
      }
    }
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
    const b = { jwt: bJwt, bucketId: bBucket, objectId: bObject, pictures };
    // Warm-up (first statements, JIT, the first thumbnails), then the quiet baseline.
    await measureB(base, b, `${name}-warm`, 6).catch(() => {});
    await Bun.sleep(2000);
    const quietLoad = [loadavg()[0]!];
    const quiet = await measureB(base, b, `${name}-quiet`);
    quietLoad.push(loadavg()[0]!);

    const cpu0 = cpuSeconds(app.pid);
    // A's load lasts as long as B's loaded phase and its last thumbnails.
    const until = Date.now() + SECONDS * 1000 + 10_000;
    const noise = noisy(base, { keys, bucketId: noiseBucket, bigId: big, big: bigBytes, setId: set.id, remotes }, until);
    // A's load gets a few seconds to build up before B is measured.
    await Bun.sleep(3000);
    const loadedLoad = [loadavg()[0]!];
    const loaded = await measureB(base, b, `${name}-loaded`);
    loadedLoad.push(loadavg()[0]!);
    const statuses = await noise;
    const serverCpu = cpuSeconds(app.pid) - cpu0;
    return { config: name, quiet, loaded, load: { quiet: quietLoad, loaded: loadedLoad }, statuses, serverCpu };
  } finally {
    hanging.release();
    await app?.stop();
    for (const p of apart) await p.stop();
    running.clear();
    weighted?.release();
    rmSync(dataDir, { recursive: true, force: true });
    if (!EMBEDDED.has(name)) await deleteRedisPrefix(prefix);
  }
}

const outcomes: (Outcome & { round: number })[] = [];
const startLoad = loadavg().map((l) => l.toFixed(1)).join(" ");
for (let round = 1; round <= REPEAT; round++) {
  for (const name of CONFIGS) {
    console.error(`[neighbours] round ${round}, ${name}: quiet ${SECONDS} s, then under org A's load ${SECONDS} s (load average ${loadavg()[0]!.toFixed(1)})`);
    const o = await runConfig(name);
    outcomes.push({ ...o, config: LOADS.size < ALL_LOADS.length ? `${name} (A: ${[...LOADS].join("+")})` : name, round });
    console.error(JSON.stringify(o));
    // Let the worker's leftovers and the machine settle between configurations.
    await Bun.sleep(5000);
  }
}
trickler.stop();
hanging.stop();

const f = (x: number) => x.toFixed(1);
let met = 0;
let rowsJudged = 0;
const judge = (ok: boolean) => {
  rowsJudged++;
  if (ok) met++;
  return ok ? "yes" : "**no**";
};
const rows = outcomes.flatMap((o) => {
  const loadOf = `${o.load.quiet.map(f).join("→")} / ${o.load.loaded.map(f).join("→")}`;
  const latency = (["presign", "get", "list", "healthz"] as const).map((route) => {
    const q = o.quiet[route];
    const l = o.loaded[route];
    const target = Math.max(2 * q.p99, q.p99 + 25);
    const verdict = route === "healthz" ? "(not a target)" : judge(l.p99 <= target);
    return `| ${o.round} | ${o.config} | ${route} p99 (ms) | ${f(q.p50)} / ${f(q.p99)} | ${f(l.p50)} / ${f(l.p99)} | ≤ ${f(target)} | ${verdict} | ${q.errors + l.errors} | ${loadOf} |`;
  });
  const q = o.quiet.thumbs;
  const l = o.loaded.thumbs;
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const target = 2 * median(q.times) + 5000;
  const slowest = l.errors > 0 ? Infinity : Math.max(...l.times);
  const thumbs = `| ${o.round} | ${o.config} | thumbnail ready (s) | ${s(median(q.times))} / ${s(Math.max(...q.times))} (${q.times.length}) | ${s(median(l.times))} / ${s(Math.max(...l.times))} (${l.times.length}) | ≤ ${s(target)} | ${judge(slowest <= target)} | ${q.errors + l.errors} | ${loadOf} |`;
  return [...latency, thumbs];
});
const statusLines = outcomes.map(
  (o) =>
    `- round ${o.round}, ${o.config}: ${Object.entries(o.statuses)
      .map(([kind, s]) => `${kind} ${Object.entries(s).map(([code, n]) => `${n}×${code}`).join(" ")}`)
      .join("; ")}; server CPU ${f(o.serverCpu)} s over the loaded phase`,
);
const section = `## neighbours — one organization's worst load against another's p99 and thumbnails (written by \`npm run bench -- neighbours\`)

${new Date().toISOString().slice(0, 16)}Z; ${cpus().length} vCPU ${cpus()[0]?.model.trim() ?? ""}, ${Math.round(totalmem() / 2 ** 30)} GiB; load average (1, 5, 15 min) at the start ${startLoad}, at the end ${loadavg().map(f).join(" ")} (other work shares this machine).
Org A: the seeded organization (${N.toLocaleString("en-US")} objects), 5 API keys, 8 search loops (\`co* OR fr* OR mi* OR w1* OR common OR frequent OR mid OR rare\`), 4 loops of uncached renders of a 24 MP JPEG, 2 loops uploading that JPEG (a thumbnail job each), set generation (4 items of 10 MP) every second, 4 loops of imports from a server that trickles a byte every 2 s, buckets created (and deleted) every half second with 20 webhook endpoints that never answer subscribed to bucket.created; a refused request waits 200 ms (429) or 1 s.
Org B: presign, get and list, each at ${RATE} requests/s open loop for ${SECONDS} s, latency in ms from each request's scheduled start; a 2 MP JPEG uploaded every ${THUMB_EVERY_MS / 1000} s, timed from confirm to thumbnail \`ready\` (polled every 250 ms). Targets: loaded p99 ≤ max(2× quiet p99, quiet p99 + 25 ms); slowest loaded thumbnail ≤ 2× the quiet median + 5 s. The healthz row (no credential, no database) shows how long the API process itself takes to get to a request. Quiet and loaded: p50 / p99 for routes, median / slowest (count) for thumbnails; load average (1 min) at the start and end of the quiet / loaded phase.

**${met} of ${rowsJudged} rows met.**

| round | config | measure | quiet | loaded | target | met | B errors | load average |
|---|---|---|---|---|---|---|---|---|
${rows.join("\n")}

Org A's answers and the server's CPU:
${statusLines.join("\n")}
`;
console.log(section);
if (process.env.BENCH_WRITE === "1") writeSection("neighbours", section);
process.exit(0);
