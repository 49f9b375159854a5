/**
 * Shared pieces of the load benchmarks (presign, get): a throwaway PostgreSQL database and
 * Redis prefix, server processes of their own (bench/_target.ts) whose RSS can be read,
 * wrk runs, the fixed-rate client, and the writer of a scenario's results file (bench/results/).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import Redis from "ioredis";
import postgres from "postgres";

export const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

export interface Lat {
  p50: number;
  p95: number;
  p99: number;
}
export interface LoadResult extends Lat {
  rps: number;
  requests: number;
  /** CPU milliseconds per request of the process serving it (server or bare loop), when measured. */
  cpuMs?: number;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}
export function median(xs: number[]): number {
  return percentile(xs, 50);
}
/** Medians of each field over several runs. */
export function medianOf<T extends object>(runs: T[]): T {
  const keys = Object.keys(runs[0]!) as (keyof T)[];
  return Object.fromEntries(keys.map((k) => [k, median(runs.map((r) => r[k] as number))])) as T;
}

/** A database of its own (dropped by `drop`) and a Redis key prefix (deleted by `drop`). */
export async function scratch(tag: string) {
  const runId = `${tag}_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
  const dbName = `media_bench_${runId}`;
  const prefix = `mbench-${runId}`;
  const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  const url = new URL(PG_URL);
  url.pathname = `/${dbName}`;
  const versions = {
    pg: (await admin.unsafe("show server_version"))[0]!.server_version as string,
    redis: await (async () => {
      const r = new Redis(REDIS_URL);
      const info = await r.info("server");
      r.disconnect();
      return /redis_version:(\S+)/.exec(info)?.[1] ?? "?";
    })(),
  };
  return {
    runId,
    databaseUrl: url.toString(),
    prefix,
    versions,
    async drop() {
      await admin.unsafe(`drop database if exists ${dbName} with (force)`).catch(() => {});
      await admin.end();
      await deleteRedisPrefix(prefix);
    },
  };
}

export async function deleteRedisPrefix(prefix: string) {
  const r = new Redis(REDIS_URL);
  let cursor = "0";
  do {
    const [next, keys] = await r.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    if (keys.length) await r.del(...keys);
  } while (cursor !== "0");
  r.disconnect();
}

/**
 * The environment of `npm start`'s server for a run's scratch database and Redis prefix, with
 * the embedded storage node: the limiter does all its work but never refuses during the run.
 */
export function appEnv(s: { databaseUrl: string; prefix: string }, dataDir: string): Record<string, string> {
  return { DATABASE_URL: s.databaseUrl, REDIS_URL, REDIS_PREFIX: s.prefix, DATA_DIR: dataDir, STORAGE_PORT: "0", LOG_LEVEL: "warn", RATE_LIMIT_PER_MINUTE: "1000000000" };
}

export interface Target {
  pid: number;
  url: string;
  info: Record<string, unknown>;
  stop(): Promise<void>;
}

/**
 * A command prefix that starts a process in a session of its own, as a service manager or a
 * container runtime starts a server. Linux with autogroups shares the CPU between sessions
 * first: a server in the bench's session would share one share with the bench's own clients.
 * Such a process gets no signal from the bench's terminal: stop it (or let `stopOnExit` do it).
 */
export const OWN_SESSION: string[] = process.platform === "linux" && Bun.which("setsid") ? [Bun.which("setsid")!] : [];

/** Stops `stop` when the bench is interrupted (its own-session servers would outlive it). */
export function stopOnExit(stop: () => unknown): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, async () => {
      await stop();
      process.exit(130);
    });
  }
}

/**
 * Starts bench/_target.ts in a process of its own (so its RSS is the server's alone, and it
 * shares no event loop with the client or other servers) and waits for its first line.
 * `ownSession`: in a session of its own as well (OWN_SESSION); `prefix`: a command the target
 * runs under (a CPU group's, bench/_cgroups.ts).
 */
export async function startTarget(job: Record<string, unknown>, opts: { ownSession?: boolean; prefix?: string[] } = {}): Promise<Target> {
  // BENCH_PROFILE_DIR: each target writes a CPU profile (Markdown) there when it stops.
  const profile = process.env.BENCH_PROFILE_DIR ? ["--cpu-prof-md", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const session = opts.ownSession ? OWN_SESSION : [];
  const proc = Bun.spawn([...(opts.prefix ?? []), ...session, process.execPath, ...profile, join(import.meta.dir, "_target.ts")], {
    env: { ...process.env, BENCH_TARGET: JSON.stringify(job) },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let buf = "";
  while (!buf.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`target ${job.mode} exited before it was ready`);
    buf += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const info = JSON.parse(buf.slice(0, buf.indexOf("\n"))) as { port: number } & Record<string, unknown>;
  return {
    pid: proc.pid,
    url: `http://127.0.0.1:${info.port}`,
    info,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** Resident set size of a process, in MiB (Linux). */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak and the last. */
export function sampleRss(pid: number, everyMs = 250) {
  const samples: number[] = [rssMiB(pid)];
  const timer = setInterval(() => samples.push(rssMiB(pid)), everyMs);
  return {
    stop() {
      clearInterval(timer);
      samples.push(rssMiB(pid));
      return { peak: Math.max(...samples), last: samples.at(-1)! };
    },
  };
}

const wrk = Bun.which("wrk");
export function requireWrk() {
  if (!wrk) {
    console.error("wrk is needed: apt-get install -y wrk");
    process.exit(2);
  }
}

let wrkRuns = 0;
/** Seeded databases outlive a bench process, so names carry the process's start too. */
const RUN_ID = Date.now().toString(36);
/**
 * wrk with one thread (the machine has two cores; the server needs the other). The script's
 * `request()` builds each request; BENCH_TAG is unique per run so generated names never repeat
 * (a repeated upload key finds the earlier run's unconfirmed reservation, and its presign then
 * asks storage what the key holds: a different, slower call).
 */
export async function runWrk(url: string, luaBody: string, connections: number, seconds: number, tag: string, serverPid?: number): Promise<LoadResult> {
  const file = join(import.meta.dir, ".work", `wrk-${process.pid}.lua`);
  await Bun.write(file, `${luaBody}\n${DONE_LUA}`);
  const proc = Bun.spawn([wrk!, "-t1", `-c${connections}`, `-d${seconds}s`, "--timeout", "10s", "-s", file, url], {
    env: { ...process.env, BENCH_TAG: `${tag}-${RUN_ID}-${++wrkRuns}` },
    stdout: "pipe",
    stderr: "inherit",
  });
  const cpu0 = serverPid ? cpuSeconds(serverPid) : 0;
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const cpu = serverPid ? cpuSeconds(serverPid) - cpu0 : 0;
  const m = /RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(out);
  if (!m) throw new Error(`wrk gave no result:\n${out}`);
  const [, requests, durationUs, p50, p95, p99, errors] = m.map(Number) as number[];
  if (errors! > 0) throw new Error(`${errors} failed requests against ${url}:\n${out}`);
  return { requests: requests!, rps: requests! / (durationUs! / 1e6), p50: p50! / 1000, p95: p95! / 1000, p99: p99! / 1000, ...(serverPid ? { cpuMs: (cpu * 1000) / requests! } : {}) };
}

const DONE_LUA = `
function done(summary, latency, requests)
  io.write(string.format("RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration, latency:percentile(50), latency:percentile(95), latency:percentile(99), summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end`;

export interface FixedRateJob {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  /** For POST: a body template; every `{n}` becomes a number unique within the run. */
  body?: string;
  /** Header values with `{n}` are filled the same way. */
  rate: number;
  seconds: number;
  tag: string;
}

/**
 * Open-loop client at a fixed rate (what wrk2 does and wrk cannot): requests start on a
 * schedule whether or not earlier ones have answered, and each latency is counted from the
 * scheduled start, so a stall is not hidden by the client waiting for it.
 */
export async function runFixedRate(job: FixedRateJob): Promise<LoadResult & { late: number; errors: number }> {
  // In a session of its own: the client stands for another machine, and must not share the
  // bench's CPU share with whatever load the bench itself generates meanwhile.
  const proc = Bun.spawn([...OWN_SESSION, process.execPath, join(import.meta.dir, "_rate-client.ts")], {
    env: { ...process.env, BENCH_RATE_JOB: JSON.stringify(job) },
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("the fixed-rate client failed");
  return JSON.parse(out);
}

/** One line for a section: date, machine, versions, and the load average as it was. */
export function machine(versions: { pg: string; redis: string }): string {
  return `${new Date().toISOString().slice(0, 10)}; ${cpus().length} vCPU ${cpus()[0]?.model.trim() ?? ""}, ${Math.round(totalmem() / 2 ** 30)} GiB; Bun ${Bun.version}, PostgreSQL ${versions.pg}, Redis ${versions.redis}, wrk 4.1.0`;
}

export function load1(): number {
  return Number(loadavg()[0]!.toFixed(1));
}

export const ms = (x: number) => x.toFixed(2);
export const int = (x: number) => Math.round(x).toLocaleString("en-US");

/**
 * Writes a scenario's section to bench/results/<scenario>.md, replacing the file whole: a rerun
 * replaces its own results and nothing else. bench/RESULTS.md is the page of targets that links
 * to these files; it is edited by hand when a run changes a verdict.
 */
export function writeSection(scenario: string, section: string) {
  const dir = join(import.meta.dir, "results");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${scenario}.md`), `${section.trimEnd()}\n`);
}

/** User + system CPU seconds of a /proc `stat` file (a process's or one thread's; clock ticks of 10 ms). */
function statCpuSeconds(path: string): number {
  const stat = readFileSync(path, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds (user + system) a process has used so far (Linux, clock ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/**
 * CPU seconds used so far by the main thread of process `pid` alone (its first task: where a
 * JavaScript runtime runs the script); `cpuSeconds(pid)` less this is its other threads' time
 * (a file thread pool, the collector's helpers).
 */
export function mainThreadCpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
}

/**
 * CPU seconds used so far by each PostgreSQL backend serving `database` on this machine (Linux),
 * found by its process title ("postgres: [cluster: ]user database host activity"). Backends of
 * other databases (other work sharing the server) are not counted, and neither are PostgreSQL's
 * shared background processes.
 */
export function pgBackendCpu(database: string): Map<number, number> {
  const title = new RegExp(`^postgres: (?:\\S+: )?\\S+ ${database.replace(/[^\w]/g, "\\$&")} `);
  const out = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (title.test(readFileSync(`/proc/${entry}/cmdline`, "utf8"))) out.set(Number(entry), cpuSeconds(Number(entry)));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return out;
}

/** CPU seconds the backends of `database` used since `before` (a `pgBackendCpu` reading); new backends count whole. */
export function pgBackendCpuSince(before: Map<number, number>, database: string): number {
  let sum = 0;
  for (const [pid, now] of pgBackendCpu(database)) sum += now - (before.get(pid) ?? 0);
  return sum;
}

/**
 * `n` busy processes standing for other work on the machine (`npm run bench -- peer --loaded`).
 * Each runs at nice 0 in a session of its own, as another agent's test run would: with
 * autogroups the scheduler shares the cores between sessions, so each is one more competitor,
 * and both sides of a comparison (neither niced) meet the same ones.
 */
export function startCpuBurner(n: number): { stop(): Promise<void> } {
  const procs = Array.from({ length: n }, () => Bun.spawn([...OWN_SESSION, process.execPath, "-e", "for (;;) {}"], { stdout: "ignore", stderr: "inherit" }));
  const stop = async () => {
    for (const p of procs) p.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
  };
  if (n > 0) stopOnExit(stop);
  return { stop };
}
