/**
 * `npm run bench -- confirm`: how many upload confirmations one organization gets through,
 * and whether they wait for each other. A confirm records the object and changes the
 * organization's storage counters; if that change held the organization's usage row until
 * the commit's WAL flush, the confirms of one organization would run one flush at a time
 * however many clients send them.
 *
 * On real PostgreSQL and Redis with the embedded storage node: uploads of 100 bytes with a
 * declared size are presigned and PUT first (not measured), then BENCH_CONNECTIONS clients
 * (16) confirm them as fast as they are answered for BENCH_SECONDS (10). Meanwhile
 * pg_stat_activity is sampled every 20 ms for backends waiting on a lock (a row lock shows as
 * `Lock:transactionid` or `Lock:tuple`). Reported: confirms per second, latency percentiles,
 * the share of samples with a backend waiting on a lock, and the server's CPU per confirm.
 * BENCH_NO_WRITE=1 leaves bench/results/confirm.md alone.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { appEnv, cpuSeconds, load1, machine, ms, percentile, scratch, startTarget, type Target, writeSection } from "./_load.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const PREPARED = Number(process.env.BENCH_UPLOADS ?? 6000);

const s = await scratch("confirm");
const dataDir = join(import.meta.dir, ".work", `confirm-${s.runId}`);
mkdirSync(dataDir, { recursive: true });
const secret = [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("");
const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
const loadStart = load1();
let app: Target | undefined;

try {
  app = await startTarget({
    mode: "app",
    secret,
    env: appEnv(s, dataDir),
  });
  const url = app.url;
  const bucket = (await (await fetch(`${url}/api/buckets`, { method: "POST", headers, body: '{"name":"bench"}' })).json()) as { id: string };
  const body = new Uint8Array(100).fill(7);

  // Prepared with 16 clients: presign and PUT, not confirmed.
  const keys: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = next++; i < PREPARED; i = next++) {
        const key = `bench/${i}.bin`;
        const p = await fetch(`${url}/api/presign/upload`, { method: "POST", headers, body: JSON.stringify({ bucketId: bucket.id, key, size: body.length, contentType: "application/octet-stream" }) });
        const signed = (await p.json()) as { url: string; headers: Record<string, string> };
        const put = await fetch(signed.url, { method: "PUT", headers: signed.headers, body });
        if (put.status !== 200) throw new Error(`PUT answered ${put.status}`);
        keys.push(key);
      }
    }),
  );

  const db = postgres(s.databaseUrl, { max: 1, onnotice: () => {} });
  let samples = 0;
  let waiting = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const [row] = await db`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
      samples++;
      if ((row?.n ?? 0) > 0) waiting++;
      await Bun.sleep(20);
    }
  })();

  const latencies: number[] = [];
  let errors = 0;
  const cpuBefore = cpuSeconds(app.pid);
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const key = keys.pop();
        if (!key) break;
        const t = performance.now();
        const res = await fetch(`${url}/api/presign/confirm`, { method: "POST", headers, body: JSON.stringify({ bucketId: bucket.id, key }) });
        await res.arrayBuffer();
        if (res.status === 200) latencies.push(performance.now() - t);
        else errors++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(app.pid) - cpuBefore;
  sampling = false;
  await sampler;
  await db.end();
  if (keys.length === 0) console.error(`[confirm] ran out of prepared uploads after ${elapsed.toFixed(1)} s; raise BENCH_UPLOADS`);

  const n = latencies.length;
  latencies.sort((a, b) => a - b);
  const row = {
    rate: n / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    lockShare: samples > 0 ? waiting / samples : 0,
    cpuPerConfirm: (cpu * 1000) / Math.max(n, 1),
  };
  const section = [
    `${new Date().toISOString().slice(0, 16)}Z; ${machine(s.versions).slice(12)}; load average (1 min) ${loadStart.toFixed(1)} at the start, ${load1().toFixed(1)} at the end.`,
    `One organization, ${CONNECTIONS} clients confirming uploads of 100 bytes presigned with their size, for ${elapsed.toFixed(1)} s.`,
    "",
    "| confirms/s | p50 ms | p99 ms | samples with a backend waiting on a lock | server CPU per confirm | errors |",
    "|---|---|---|---|---|---|",
    `| ${row.rate.toFixed(0)} | ${ms(row.p50)} | ${ms(row.p99)} | ${(row.lockShare * 100).toFixed(0)}% of ${samples} | ${ms(row.cpuPerConfirm)} ms | ${errors} |`,
  ].join("\n");
  console.log(section);
  if (process.env.BENCH_NO_WRITE !== "1") writeSection("confirm", `## confirm — one organization's upload confirmations (written by \`npm run bench -- confirm\`)\n\n${section}`);
} finally {
  await app?.stop();
  await s.drop();
}
