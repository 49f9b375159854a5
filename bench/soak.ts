/**
 * `npm run bench -- soak`: a bounded soak on loopback. One process holds a real server
 * (startServer: REST API, guards, metering, worker, embedded storage node) and drives it with
 * the mixed load of bench/_soak.ts at a steady rate: uploads (presign, PUT, confirm),
 * presigned downloads and reads, each started on its tick.
 *
 * At the end: zero errors; usage exact (storage used = sum of confirmed sizes, object count,
 * egress = sizes of downloads issued, API calls = requests made); memory flat: RSS and heap
 * sampled every second, reported as first/last/max after the warm-up (the first 20 % of the
 * run) and as a least-squares slope in MiB per minute. Exit code 1 when any check fails.
 *
 * SOAK_SECONDS (default 180), SOAK_RATE operations per second (default 20),
 * BENCH_MODE=embedded|services (embedded: PGlite and in-process queues; services: the
 * PostgreSQL/Redis of TEST_DATABASE_URL/TEST_REDIS_URL, as test/run.ts sets them).
 */
import { cpus, loadavg, totalmem } from "node:os";
import { newOrg, startServer } from "../test/support/server.ts";
import { runSoak, usageNow } from "./_soak.ts";

const seconds = Number(process.env.SOAK_SECONDS ?? 180);
const rate = Number(process.env.SOAK_RATE ?? 20);
const embedded = (process.env.BENCH_MODE ?? "embedded") === "embedded";
/** Growth that still counts as flat over the measured part of the run. */
const FLAT_MIB_PER_MIN = 2;
const MiB = 1024 * 1024;

const server = await startServer({ embedded });
const org = await newOrg(server);
const bucket = (await org.admin.post("/api/buckets", { name: "soak" })).body as { id: string };
console.log(`soak: ${seconds} s at ${rate} ops/s, ${server.services.backends.database} + ${server.services.backends.queue} queue + ${server.services.backends.guards} guards`);
console.log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? "?"}, ${Math.round(totalmem() / 1024 ** 3)} GiB, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);

const samples: { t: number; rss: number; heap: number }[] = [];
const sample = (t: number) => {
  const m = process.memoryUsage();
  samples.push({ t, rss: m.rss, heap: m.heapUsed });
};
sample(0);
const before = await usageNow(server, org);
const run = await runSoak(server, org, bucket.id, {
  seconds,
  rate,
  onSecond: (t) => {
    sample(t);
    if (Math.floor(t) % 30 === 0) console.log(`  ${Math.floor(t)} s: ${(samples.at(-1)!.rss / MiB).toFixed(0)} MiB RSS`);
  },
});
const after = await usageNow(server, org);
await server.stop();

const measured = samples.filter((s) => s.t >= seconds * 0.2);
/** Least-squares slope of `y` over time, in MiB per minute. */
const slope = (y: (s: (typeof samples)[number]) => number) => {
  const n = measured.length;
  const mt = measured.reduce((a, s) => a + s.t, 0) / n;
  const my = measured.reduce((a, s) => a + y(s), 0) / n;
  const num = measured.reduce((a, s) => a + (s.t - mt) * (y(s) - my), 0);
  const den = measured.reduce((a, s) => a + (s.t - mt) ** 2, 0);
  return den === 0 ? 0 : (num / den) * 60 / MiB;
};
const mib = (b: number) => (b / MiB).toFixed(1);
const sorted = [...run.latenciesMs].sort((a, b) => a - b);
const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]?.toFixed(1) ?? "-";

const checks = {
  errors: run.errors.length === 0,
  usedStorage: after.usedStorage - before.usedStorage === run.bytesConfirmed,
  objectCount: after.objectCount - before.objectCount === run.uploads,
  egress: after.egressThisMonth - before.egressThisMonth === run.egressIssued,
  apiCalls: after.apiCallsThisMonth - before.apiCallsThisMonth === run.apiCalls + 1,
  rssFlat: slope((s) => s.rss) < FLAT_MIB_PER_MIN,
};
const rss = measured.map((s) => s.rss);
const heap = measured.map((s) => s.heap);
console.log(`
operations ${run.operations} in ${run.elapsedSeconds.toFixed(1)} s (${(run.operations / run.elapsedSeconds).toFixed(1)}/s), max in flight ${run.maxInFlight}
errors ${run.errors.length}${run.errors.length ? `: ${run.errors.slice(0, 5).join(" | ")}` : ""}
latency per operation ms: p50 ${pct(50)}, p99 ${pct(99)}, max ${pct(100)}
uploads ${run.uploads}, confirmed ${run.bytesConfirmed} B; usage used ${after.usedStorage - before.usedStorage} B, objects ${after.objectCount - before.objectCount}
egress issued ${run.egressIssued} B; usage egress ${after.egressThisMonth - before.egressThisMonth} B
API calls made ${run.apiCalls} (+1 usage read); usage counted ${after.apiCallsThisMonth - before.apiCallsThisMonth}
RSS MiB after warm-up: first ${mib(rss[0]!)}, last ${mib(rss.at(-1)!)}, max ${mib(Math.max(...rss))}; slope ${slope((s) => s.rss).toFixed(2)} MiB/min
heap MiB after warm-up: first ${mib(heap[0]!)}, last ${mib(heap.at(-1)!)}, max ${mib(Math.max(...heap))}; slope ${slope((s) => s.heap).toFixed(2)} MiB/min
checks: ${Object.entries(checks).map(([k, ok]) => `${k} ${ok ? "ok" : "FAILED"}`).join(", ")}`);
process.exit(Object.values(checks).every(Boolean) ? 0 : 1);
