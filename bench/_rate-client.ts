/**
 * The fixed-rate client of bench/_load.ts (runFixedRate), in its own process. Input:
 * BENCH_RATE_JOB (JSON FixedRateJob). Output: one JSON line with the achieved rate and the
 * latency percentiles in milliseconds, counted from each request's scheduled start.
 */
import type { FixedRateJob } from "./_load.ts";

const job = JSON.parse(process.env.BENCH_RATE_JOB!) as FixedRateJob;
const fill = (s: string, n: number) => s.replaceAll("{n}", `${job.tag}-${n}`);
const interval = 1000 / job.rate;
const total = Math.round(job.rate * job.seconds);
const latencies: number[] = [];
let errors = 0;
let late = 0;
let inFlight = 0;
let done = 0;

async function send(n: number, scheduled: number) {
  inFlight++;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(job.headers)) headers[k] = fill(v, n);
  try {
    const res = await fetch(job.url, { method: job.method, headers, ...(job.body ? { body: fill(job.body, n) } : {}) });
    await res.arrayBuffer();
    if (res.status >= 300) errors++;
  } catch {
    errors++;
  }
  latencies.push(performance.now() - scheduled);
  inFlight--;
  done++;
}

const start = performance.now() + 50;
let sent = 0;
const all: Promise<void>[] = [];
while (sent < total) {
  const now = performance.now();
  // Everything due by now goes out now; a client that fell behind (a pause of this process)
  // still counts those requests from when they were due.
  while (sent < total && start + sent * interval <= now) {
    const scheduled = start + sent * interval;
    if (now - scheduled > 1) late++;
    all.push(send(sent, scheduled));
    sent++;
  }
  const next = start + sent * interval - performance.now();
  await Bun.sleep(Math.max(0, Math.min(next, 5)));
}
await Promise.all(all);
const elapsed = (performance.now() - start) / 1000;
const s = latencies.sort((a, b) => a - b);
const at = (p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
process.stdout.write(
  JSON.stringify({ requests: done, rps: done / elapsed, p50: at(50), p95: at(95), p99: at(99), errors, late: late / Math.max(1, total), inFlight }),
);
