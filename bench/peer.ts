/**
 * `npm run bench -- peer`: the operations this service shares with Supabase Storage, against
 * both, in the same run, on the same PostgreSQL: signed upload URL, signed download URL,
 * object metadata, first page of a listing of 50,000 objects, a search of a term matching
 * 500 of them (our full-text search, and the peer's own operation on our side: a substring of
 * the key), and 20 MiB uploads end to end, 8 at a time.
 *
 * The peer is built from source in a temporary directory (bench/_peer-build.ts; Node 24 from
 * npm, pg-boss swapped for its npm release) and runs with its file backend, its own database
 * (made and dropped here) and the roles its migrations create on the server (anon,
 * authenticated, authenticator, service_role: whichever did not exist before are dropped at
 * the end). Ours runs as `npm start` builds it, on PostgreSQL and Redis with its embedded S3
 * node, on the seeded 50,000-object database of bench/_seed.ts, through a dashboard JWT; the
 * peer through its service key. Both get the same 50,000 names' worth of rows ("mid" in 1%).
 *
 * wrk (1 thread, BENCH_CONNECTIONS 32) runs BENCH_ROUNDS (5) rounds of BENCH_SECONDS (5) per
 * operation, alternating ours and the peer's, so both see the same moments of the machine;
 * medians are reported with the CPU per request of each side's server and of the PostgreSQL
 * backends serving its database (from /proc: the comparison is of the work each side gives the
 * machine, wherever it runs), the median of the rounds' ratios and the load average.
 * `--loaded` (BENCH_LOAD=n; `--loaded=n`): n busy processes (one per core by default, bench/_load.ts
 * startCpuBurner) run from the first round to the last, the same for both sides, so the ratios
 * are those of a machine busy with other work; the section says so.
 * `--s3`: both sides keep their bytes in one S3-compatible store, as in production: our storage
 * node run on its own (storage/local-s3/main.ts). Our clients PUT to it straight through presigned
 * URLs; the peer's POST is streamed to it by the peer. The store's CPU per upload is reported
 * for each side; the files are peer-s3.md and peer-s3-loaded.md.
 * It writes bench/results/peer.md (peer-loaded.md when loaded); BENCH_NO_WRITE=1 leaves them alone; BENCH_PEER_DIR reuses a build; BENCH_PEER_OPS
 * (a comma list of words, e.g. `list,search`) runs only the operations whose name has one.
 */
import { mkdirSync, rmSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { SignJWT } from "jose";
import postgres from "postgres";
import { cpuSeconds, int, mainThreadCpuSeconds, type LoadResult, load1, median, medianOf, ms, PG_URL, pgBackendCpu, pgBackendCpuSince, requireWrk, rssMiB, runWrk, sampleRss, startCpuBurner, writeSection } from "./_load.ts";
import { buildPeer, PEER_GIT } from "./_peer-build.ts";
import { seededServer } from "./_seeded-server.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const OBJECTS = 50_000;
const UPLOAD_MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 20);
const UPLOADS = Number(process.env.BENCH_UPLOADS ?? 24);
const PARALLEL = 8;
const PEER_SECRET = "peer-bench-jwt-secret-at-least-32-chars";
const MiB = 1024 * 1024;
const loadedArg = process.argv.slice(2).find((a) => a === "--loaded" || a.startsWith("--loaded="));
const BURNERS = Number(process.env.BENCH_LOAD ?? (loadedArg ? (loadedArg.split("=")[1] ?? cpus().length) : 0));
if (!Number.isInteger(BURNERS) || BURNERS < 0) {
  console.error(`BENCH_LOAD / --loaded=<n>: a whole number of busy processes, not ${process.env.BENCH_LOAD ?? loadedArg}`);
  process.exit(2);
}

requireWrk();
const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
const rolesBefore = new Set((await admin`select rolname from pg_roles`).map((r) => r.rolname as string));
const peerDb = `media_bench_peer_${Date.now()}`;
const loadStart = load1();
const build = buildPeer();
const S3_STORE = process.argv.includes("--s3");
const STORE_KEY = { accessKeyId: "BENCHSTOREKEY", secretAccessKey: "bench-store-secret-0123456789" };
const storeDir = join(import.meta.dir, ".work", `store-${Date.now()}`);
const store = S3_STORE ? await startStore() : null;
const ours = await seededServer(
  "peer",
  OBJECTS,
  store ? { S3_ENDPOINT: store.url, S3_ACCESS_KEY_ID: STORE_KEY.accessKeyId, S3_SECRET_ACCESS_KEY: STORE_KEY.secretAccessKey, S3_BUCKET: "media" } : {},
);

/** The shared store of `--s3`: our storage node in a process of its own, with a bucket for each side. */
async function startStore() {
  const port = 40_000 + Math.floor(Math.random() * 10_000);
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../storage/local-s3/main.ts")], {
    env: { ...process.env, STORAGE_PORT: String(port), DATA_DIR: storeDir, S3_ACCESS_KEY_ID: STORE_KEY.accessKeyId, S3_SECRET_ACCESS_KEY: STORE_KEY.secretAccessKey },
    stdout: "ignore",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url, 30, true);
  const s3 = new S3Client({ endpoint: url, region: "us-east-1", forcePathStyle: true, credentials: STORE_KEY });
  for (const Bucket of ["media", "bench"]) await s3.send(new CreateBucketCommand({ Bucket }));
  s3.destroy();
  return { url, proc };
}
let peerProc: ReturnType<typeof Bun.spawn> | null = null;
let burner: { stop(): Promise<void> } | null = null;
const peerData = join(import.meta.dir, ".work", `peer-data-${Date.now()}`);

async function waitFor(url: string, seconds: number, anyAnswer = false) {
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    const ok = await fetch(url)
      .then((r) => anyAnswer || r.ok)
      .catch(() => false);
    if (ok) return;
    await Bun.sleep(250);
  }
  throw new Error(`${url} did not answer within ${seconds} s`);
}

try {
  // --- the peer: database, server, bucket, the same 50,000 rows
  await admin.unsafe(`create database ${peerDb}`);
  const peerUrl = new URL(PG_URL);
  peerUrl.pathname = `/${peerDb}`;
  mkdirSync(peerData, { recursive: true });
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const started = performance.now();
  peerProc = Bun.spawn([build.node, "dist/start/server.js"], {
    cwd: build.src,
    env: {
      PATH: process.env.PATH ?? "",
      NODE_ENV: "production",
      DATABASE_URL: peerUrl.toString(),
      DB_INSTALL_ROLES: "true",
      AUTH_JWT_SECRET: PEER_SECRET,
      ...(store
        ? {
            STORAGE_BACKEND: "s3",
            STORAGE_S3_ENDPOINT: store.url,
            STORAGE_S3_FORCE_PATH_STYLE: "true",
            STORAGE_S3_REGION: "us-east-1",
            AWS_ACCESS_KEY_ID: STORE_KEY.accessKeyId,
            AWS_SECRET_ACCESS_KEY: STORE_KEY.secretAccessKey,
          }
        : { STORAGE_BACKEND: "file", STORAGE_FILE_BACKEND_PATH: peerData }),
      SERVER_HOST: "127.0.0.1",
      SERVER_PORT: String(port),
      SERVER_ADMIN_PORT: String(port + 1),
      PG_QUEUE_ENABLE: "false",
      LOG_LEVEL: "error",
      TENANT_ID: "bench",
      REGION: "local",
      GLOBAL_S3_BUCKET: "bench",
      RATE_LIMITER_ENABLED: "false",
      OTEL_METRICS_ENABLED: "false",
      PROMETHEUS_METRICS_ENABLED: "false",
      UPLOAD_FILE_SIZE_LIMIT: String(1024 * MiB),
      UPLOAD_FILE_SIZE_LIMIT_STANDARD: String(1024 * MiB),
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const peer = `http://127.0.0.1:${port}`;
  await waitFor(`${peer}/status`, 120);
  const peerStartS = (performance.now() - started) / 1000;
  const serviceKey = await new SignJWT({ role: "service_role" }).setProtectedHeader({ alg: "HS256" }).setIssuedAt().setExpirationTime("2h").sign(new TextEncoder().encode(PEER_SECRET));
  const peerAuth = `Bearer ${serviceKey}`;
  const peerCall = async (method: string, path: string, body?: BodyInit, type = "application/json") => {
    const res = await fetch(`${peer}${path}`, { method, headers: { authorization: peerAuth, "content-type": type, "x-upsert": "true" }, ...(body !== undefined ? { body } : {}) });
    if (!res.ok) throw new Error(`peer ${method} ${path} answered ${res.status}: ${await res.text()}`);
    return res.json();
  };
  await peerCall("POST", "/bucket", JSON.stringify({ id: "bench", name: "bench", public: false }));
  await peerCall("POST", "/object/bench/target.jpg", new Uint8Array(1000), "image/jpeg");
  const peerSql = postgres(peerUrl.toString(), { max: 1, onnotice: () => {} });
  // Its search is a name prefix within a folder, so the 500 matches start with the term.
  await peerSql.unsafe(`
    insert into storage.objects (bucket_id, name, metadata)
    select 'bench', 'photos/' || (case when i % 100 = 0 then 'mid-' else 'x-' end) || i || '.jpg',
           jsonb_build_object('size', 1000, 'mimetype', 'image/jpeg', 'eTag', '"bench"', 'cacheControl', 'max-age=3600',
                              'lastModified', now(), 'contentLength', 1000, 'httpStatusCode', 200)
      from generate_series(0, ${OBJECTS - 1}) i`);
  await peerSql.unsafe("vacuum analyze storage.objects");
  await peerSql.end();
  const peerIdle = rssMiB(peerProc.pid);

  // --- ours: one real object for the URL and metadata calls
  const oursAuth = ours.headers.authorization;
  const oursCall = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${ours.app.url}${path}`, { method, headers: { authorization: oursAuth, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
    if (!res.ok) throw new Error(`ours ${method} ${path} answered ${res.status}: ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const uploadOurs = async (key: string, bytes: Uint8Array<ArrayBuffer>) => {
    const p = await oursCall("POST", "/api/presign/upload", { bucketId: ours.bucketId, key, contentType: "application/octet-stream", size: bytes.byteLength });
    const put = await fetch(p.url, { method: "PUT", headers: p.headers, body: bytes });
    if (!put.ok) throw new Error(`PUT answered ${put.status}`);
    return oursCall("POST", "/api/presign/confirm", { bucketId: ours.bucketId, key });
  };
  // Keys of their own per run: the seeded database is reused, and the storage is new each run.
  // What earlier runs uploaded and reserved stays counted there, so the allocation is lifted:
  // the quota is not what this measures.
  const run = Date.now().toString(36);
  const oursSql = postgres(ours.url, { max: 1, onnotice: () => {} });
  // The seed's tag and category links rewrite every row's labels after the insert (the
  // database's triggers, once per link table), which leaves two dead versions of each; until a
  // vacuum their index entries are candidates every key search visits (1,499 heap blocks for
  // 500 matches). Autovacuum removes them in production (it is off on this machine); the
  // peer's table is vacuumed above the same way.
  try {
    await oursSql`update org_usage set allocated_storage = ${String(2 ** 50)} where org_id = ${ours.orgId}`;
    await oursSql.unsafe("vacuum analyze media_objects");
  } finally {
    await oursSql.end();
  }
  const target = await uploadOurs(`target-${run}.jpg`, new Uint8Array(1000));
  const oursIdle = rssMiB(ours.app.pid);

  // Both answer these before the clock starts: a wrong answer is an error, not a fast one.
  const searchCheck = await oursCall("GET", "/api/search?q=mid&limit=100");
  const peerSearchCheck = (await peerCall("POST", "/object/list/bench", JSON.stringify({ prefix: "photos/", search: "mid", limit: 100, offset: 0 }))) as unknown[];
  if (searchCheck.total !== 500 || peerSearchCheck.length !== 100) throw new Error(`search does not match 500 on both: ours ${searchCheck.total}, peer page ${peerSearchCheck.length}`);
  const keySearchCheck = await oursCall("GET", `/api/media?search=mid&limit=100&bucketId=${ours.bucketId}`);
  if (keySearchCheck.total !== 500 || keySearchCheck.data.length !== 100) throw new Error(`the key search does not match 500: ${keySearchCheck.total}`);

  const lua = (method: string, path: string, auth: string, body: string | null) => `
local n = 0
local tag = os.getenv("BENCH_TAG")
request = function()
  n = n + 1
  local id = tag .. "-" .. n
  local path = string.gsub("${path}", "{id}", id)
  ${body === null ? `return wrk.format("${method}", path, { ["authorization"] = "${auth}" })` : `return wrk.format("${method}", path, { ["authorization"] = "${auth}", ["content-type"] = "application/json" }, string.gsub('${body}', "{id}", id))`}
end`;
  const ops: { name: string; ours: string; peer: string; note: string }[] = [
    {
      name: "signed upload URL",
      ours: lua("POST", "/api/presign/upload", oursAuth, `{"bucketId":"${ours.bucketId}","key":"peer/{id}.jpg","contentType":"image/jpeg","size":1000}`),
      peer: lua("POST", "/object/upload/sign/bench/peer/{id}.jpg", peerAuth, "{}"),
      note: "ours also reserves quota and checks the bucket",
    },
    {
      name: "signed download URL",
      ours: lua("POST", "/api/presign/download", oursAuth, `{"objectId":"${target.id}"}`),
      peer: lua("POST", "/object/sign/bench/target.jpg", peerAuth, `{"expiresIn":3600}`),
      note: "ours also counts egress (events written in batches every 250 ms)",
    },
    { name: "object metadata", ours: lua("GET", `/api/media/${target.id}`, oursAuth, null), peer: lua("GET", "/object/info/bench/target.jpg", peerAuth, null), note: "ours adds labels and thumbnails" },
    {
      name: "list, first 100 of 50,000",
      ours: lua("GET", `/api/media?limit=100&bucketId=${ours.bucketId}`, oursAuth, null),
      peer: lua("POST", "/object/list/bench", peerAuth, `{"prefix":"photos/","limit":100,"offset":0,"sortBy":{"column":"name","order":"asc"}}`),
      note: "ours adds the total, labels and thumbnails",
    },
    {
      name: "search, a term matching 500",
      ours: lua("GET", "/api/search?q=mid&limit=100", oursAuth, null),
      peer: lua("POST", "/object/list/bench", peerAuth, `{"prefix":"photos/","search":"mid","limit":100,"offset":0}`),
      note: "ours ranks, counts and facets full text; the peer's is a name-prefix scan",
    },
    {
      // The peer's own operation on our side: the spec's substring match on the key (a trigram index), with the total.
      name: "key search, a term matching 500 (like for like)",
      ours: lua("GET", `/api/media?search=mid&limit=100&bucketId=${ours.bucketId}`, oursAuth, null),
      peer: lua("POST", "/object/list/bench", peerAuth, `{"prefix":"photos/","search":"mid","limit":100,"offset":0}`),
      note: "ours matches anywhere in the key and counts the matches; the peer's matches a name prefix",
    },
  ];
  // BENCH_PEER_OPS: a comma list of words; only the operations whose name has one of them run.
  const only = process.env.BENCH_PEER_OPS?.split(",").filter(Boolean);
  if (only) ops.splice(0, ops.length, ...ops.filter((op) => only.some((w) => op.name.includes(w))));
  const rssOurs = sampleRss(ours.app.pid);
  const rssPeer = sampleRss(peerProc.pid);
  // Autovacuum may be off on a test machine's PostgreSQL (it is on this one); in production it
  // refreshes the statistics of tables a run grows (ours: upload reservations, the audit log),
  // and without that a plan made when such a table was empty (a prepared statement's generic
  // plan) scans it whole. Both databases are analyzed before every round, as it would.
  const analyzeBoth = async () => {
    for (const url of [ours.url, peerUrl.toString()]) {
      const c = postgres(url, { max: 1, onnotice: () => {} });
      await c.unsafe("analyze").finally(() => c.end());
    }
  };
  const oursDb = new URL(ours.url).pathname.slice(1);
  /** A wrk run with the CPU per request of the side's PostgreSQL backends beside its server's. */
  const measured = async (who: "ours" | "peer", script: string, tag: string) => {
    const db = who === "ours" ? oursDb : peerDb;
    const pg0 = pgBackendCpu(db);
    const res = who === "ours" ? await runWrk(ours.app.url, script, CONNECTIONS, SECONDS, tag, ours.app.pid) : await runWrk(peer, script, CONNECTIONS, SECONDS, tag, peerProc!.pid);
    return { ...res, pgCpuMs: (pgBackendCpuSince(pg0, db) * 1000) / res.requests };
  };
  type Round = LoadResult & { pgCpuMs: number };
  const cpuCells = (o: { cpuMs?: number; pgCpuMs: number }, p: { cpuMs?: number; pgCpuMs: number }) => {
    const oursAll = (o.cpuMs ?? 0) + o.pgCpuMs;
    const peerAll = (p.cpuMs ?? 0) + p.pgCpuMs;
    return `${ms(o.cpuMs ?? 0)} + ${ms(o.pgCpuMs)} = ${ms(oursAll)} | ${ms(p.cpuMs ?? 0)} + ${ms(p.pgCpuMs)} = ${ms(peerAll)} | ${(oursAll / peerAll).toFixed(2)}`;
  };
  burner = startCpuBurner(BURNERS);
  const rows: string[] = [];
  for (const op of ops) {
    const runs: { ours: Round[]; peer: Round[]; load: number[] } = { ours: [], peer: [], load: [] };
    for (let r = 0; r < ROUNDS; r++) {
      await analyzeBoth();
      runs.load.push(load1());
      // Alternating which goes first, so neither always gets the quieter half.
      const order = r % 2 === 0 ? (["ours", "peer"] as const) : (["peer", "ours"] as const);
      for (const who of order) {
        const res = await measured(who, who === "ours" ? op.ours : op.peer, `peer-${who[0]}-${r}`);
        runs[who].push(res);
        process.stderr.write(`${op.name} round ${r + 1} ${who}: ${int(res.rps)} req/s, p50 ${ms(res.p50)} p99 ${ms(res.p99)} ms, CPU ${ms(res.cpuMs ?? 0)} ms + PostgreSQL ${ms(res.pgCpuMs)} ms\n`);
      }
    }
    // Paired: each round's ratio is of two runs a few seconds apart; the median of those.
    const ratios = runs.ours.map((o, i) => o.rps / runs.peer[i]!.rps);
    const o = medianOf(runs.ours);
    const p = medianOf(runs.peer);
    rows.push(
      `| ${op.name} | ${int(o.rps)}, p99 ${ms(o.p99)} | ${int(p.rps)}, p99 ${ms(p.p99)} | **${median(ratios).toFixed(2)}** (${ratios.map((r) => r.toFixed(2)).join(", ")}) | ${cpuCells(o, p)} | ${op.note} | ${Math.min(...runs.load)}-${Math.max(...runs.load)} |`,
    );
  }

  // --- uploads end to end: 20 MiB each, 8 at a time, alternating rounds
  const bytes = new Uint8Array(UPLOAD_MIB * MiB);
  for (let i = 0; i < bytes.length; i += 65536) crypto.getRandomValues(bytes.subarray(i, Math.min(bytes.length, i + 65536)));
  const pool = async (count: number, one: (i: number) => Promise<unknown>) => {
    let next = 0;
    const t = performance.now();
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < count) await one(next++);
      }),
    );
    return (count * UPLOAD_MIB) / ((performance.now() - t) / 1000);
  };
  type UploadCpu = { cpuMs: number; pgCpuMs: number; mainMs: number; clientMs: number; storeMs: number };
  const up: { ours: number[]; peer: number[]; load: number[]; cpu: { ours: UploadCpu[]; peer: UploadCpu[] } } = { ours: [], peer: [], load: [], cpu: { ours: [], peer: [] } };
  /**
   * MiB/s of `count` uploads, and the CPU per upload of the side's server (and of its main thread
   * alone), of its PostgreSQL backends, and of this process, the client sending the bodies.
   */
  const timedPool = async (who: "ours" | "peer", one: (i: number) => Promise<unknown>) => {
    const pid = who === "ours" ? ours.app.pid : peerProc!.pid;
    const db = who === "ours" ? oursDb : peerDb;
    const storeCpu = () => (store ? cpuSeconds(store.proc.pid) : 0);
    const [cpu0, main0, client0, store0, pg0] = [cpuSeconds(pid), mainThreadCpuSeconds(pid), cpuSeconds(process.pid), storeCpu(), pgBackendCpu(db)];
    const rate = await pool(UPLOADS, one);
    const per = (seconds: number) => (seconds * 1000) / UPLOADS;
    up.cpu[who].push({
      cpuMs: per(cpuSeconds(pid) - cpu0),
      pgCpuMs: per(pgBackendCpuSince(pg0, db)),
      mainMs: per(mainThreadCpuSeconds(pid) - main0),
      clientMs: per(cpuSeconds(process.pid) - client0),
      storeMs: per(storeCpu() - store0),
    });
    return rate;
  };
  const uploadRounds = !only || only.some((w) => "uploads".includes(w)) ? ROUNDS : 0;
  for (let r = 0; r < uploadRounds; r++) {
    up.load.push(load1());
    up.ours.push(await timedPool("ours", (i) => uploadOurs(`up/${run}-${r}-${i}.bin`, bytes)));
    up.peer.push(await timedPool("peer", (i) => peerCall("POST", `/object/bench/up/${r}-${i}.bin`, bytes, "application/octet-stream")));
    process.stderr.write(`uploads round ${r + 1}: ours ${up.ours.at(-1)!.toFixed(1)} MiB/s, peer ${up.peer.at(-1)!.toFixed(1)} MiB/s; CPU per upload ${JSON.stringify(up.cpu.ours.at(-1))} ${JSON.stringify(up.cpu.peer.at(-1))}\n`);
  }
  const upRatios = up.ours.map((o, i) => o / up.peer[i]!);
  const threadCell = (c: UploadCpu) => `${int(c.mainMs)} of ${int(c.cpuMs)} ms (the client's: ${int(c.clientMs)} ms)`;
  if (uploadRounds > 0) rows.push(
    `| ${UPLOAD_MIB} MiB uploads, ${PARALLEL} in parallel (MiB/s; CPU per upload) | ${median(up.ours).toFixed(1)} | ${median(up.peer).toFixed(1)} | **${median(upRatios).toFixed(2)}** (${upRatios.map((r) => r.toFixed(2)).join(", ")}) | ${cpuCells(medianOf(up.cpu.ours), medianOf(up.cpu.peer))} | ${store ? `ours: presign, PUT straight to the store, confirm (3 requests); the peer: one POST it streams to the store. The store's CPU per upload: ours ${int(medianOf(up.cpu.ours).storeMs)} ms, the peer's ${int(medianOf(up.cpu.peer).storeMs)} ms` : "ours: presign, PUT to the S3 node, confirm (3 requests); the peer: one POST to its file backend"}. Main thread's share of each server's CPU: ours ${threadCell(medianOf(up.cpu.ours))}, the peer's ${threadCell(medianOf(up.cpu.peer))} | ${Math.min(...up.load)}-${Math.max(...up.load)} |`,
  );
  await burner.stop();
  const memOurs = rssOurs.stop();
  const memPeer = rssPeer.stop();

  const busy = `${BURNERS} busy process${BURNERS === 1 ? "" : "es"}`;
  const section = [
    `## peer — against Supabase Storage, same run${store ? ", both on one S3-compatible store" : ""}${BURNERS > 0 ? `, loaded (${busy})` : ""}`,
    "",
    `\`npm run bench -- peer\`, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC. Supabase Storage ${build.commit} (${PEER_GIT}), built from`,
    `source in a temporary directory with Node 24 from npm and pg-boss from npm instead of its git fork, ${store ? "S3" : "file"} backend,`,
    `its own database on the same PostgreSQL, service key. Ours: \`npm start\`'s server on PostgreSQL + Redis with the`,
    `${store ? "store below" : "embedded S3 node"}, a dashboard JWT, rate limit raised. Both on 50,000 objects ("mid" in 500). wrk, 1 thread,`,
    `${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per operation alternating ours and the peer's; medians of`,
    "the rounds. The ratio is the median of each round's ratio (two runs seconds apart). CPU per request: the server's",
    "process plus the PostgreSQL backends serving its database, in ms (ours needs Redis too, not counted: it is shared).",
    "The last column is the 1-minute load average during that operation's rounds: the machine is shared with other",
    "agents' test runs, so only the ratios of one row compare, and CPU per request is the steadier measure.",
    "",
    ...(store
      ? [
          "**Both on one S3-compatible store** (`--s3`), in place of the file backend and the embedded node: our storage node",
          "run on its own (storage/local-s3/main.ts), a bucket for each side. Ours hands out presigned URLs and the client",
          "PUTs to the store; the peer receives each body and streams it to the store. Each side's CPU per request counts",
          "its server and PostgreSQL, not the store's, which the uploads row states per side.",
          "",
        ]
      : []),
    BURNERS > 0
      ? `**Loaded** (\`--loaded\`): ${busy} at nice 0, each in a session of its own, ran through every round of both sides.`
      : "Not loaded: the machine as it was (`--loaded` adds busy processes the bench starts and stops itself).",
    "",
    "| operation | ours req/s, p99 ms | peer req/s, p99 ms | ours/peer, median of the rounds' (each round) | CPU per request, ours: process + PostgreSQL | the peer's: process + PostgreSQL | ours / peer CPU | what differs | load |",
    "|---|---|---|---|---|---|---:|---|---|",
    ...rows,
    "",
    `Memory (RSS): ours ${oursIdle.toFixed(0)} MiB idle, ${memOurs.peak.toFixed(0)} MiB peak; peer ${peerIdle.toFixed(0)} MiB idle, ${memPeer.peak.toFixed(0)} MiB peak.`,
    `Peer start (migrations on an empty database included): ${peerStartS.toFixed(1)} s. Load average ${loadStart} at the start, ${load1()} at the end.`,
  ].join("\n");
  process.stdout.write(`${section}\n`);
  // A loaded run has a file of its own: the quiet run of record stays beside it.
  if (!process.env.BENCH_NO_WRITE) writeSection(`peer${store ? "-s3" : ""}${BURNERS > 0 ? "-loaded" : ""}`, section);
} finally {
  await burner?.stop();
  if (peerProc) {
    peerProc.kill("SIGTERM");
    await Promise.race([peerProc.exited, Bun.sleep(10_000)]);
    peerProc.kill("SIGKILL");
  }
  await ours.stop();
  await admin.unsafe(`drop database if exists ${peerDb} with (force)`).catch(() => {});
  // The roles its migrations created (cluster-wide): dropped once the database that used them is gone.
  for (const { rolname } of await admin`select rolname from pg_roles`) {
    if (!rolesBefore.has(rolname)) await admin.unsafe(`drop role if exists "${rolname}"`).catch((err) => process.stderr.write(`[peer] could not drop role ${rolname}: ${err}\n`));
  }
  await admin.end();
  rmSync(peerData, { recursive: true, force: true });
  if (store) {
    store.proc.kill("SIGTERM");
    await store.proc.exited;
    rmSync(storeDir, { recursive: true, force: true });
  }
  build.remove();
}
