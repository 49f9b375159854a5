/**
 * `npm test`: the whole suite on real PostgreSQL and Redis when they are reachable (a fresh
 * database for this run, dropped afterwards), and on the embedded backends (PGlite, in-process
 * queue and stores), the two passes side by side. Without the services it runs embedded only
 * and says so.
 * REQUIRE_SERVICES=1 (set by .ci/run) turns a missing service into a failure.
 * Extra arguments go to `bun test` (e.g. a file filter). TEST_MODES=services|embedded picks one.
 */
import { chmodSync, closeSync, copyFileSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statfsSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Redis from "ioredis";
import postgres from "postgres";

const PG_URL = process.env.TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.TEST_REDIS ?? "redis://127.0.0.1:6379";
const requireServices = process.env.REQUIRE_SERVICES === "1";
const modes = (process.env.TEST_MODES ?? "services,embedded").split(",");
const args = process.argv.slice(2);

/**
 * Writes to stdout before returning. A pass's whole output (megabytes) written through
 * process.stdout is still queued for the pipe when the run exits, and CI read a log cut off
 * before its counts; a full pipe (EAGAIN) is waited out.
 */
function say(text: string): void {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; ) {
    try {
      at += writeSync(1, bytes, at, bytes.length - at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
      Bun.sleepSync(5);
    }
  }
}

async function pgReachable(): Promise<boolean> {
  const sql = postgres(PG_URL, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

async function redisReachable(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on("error", () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

// CI keeps only the tail of a run's output, so the failing tests are named again at the end.
const failures: string[] = [];
const fromXml = (s: string) => s.replace(/&#10;/g, " ").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

function failuresIn(xml: string, mode: string): string[] {
  const found: string[] = [];
  for (const m of xml.matchAll(/<testcase ([^>]*?)>\s*<(?:failure|error)\b([^>]*)>/g)) {
    const attr = (s: string, n: string) => fromXml(new RegExp(`\\b${n}="([^"]*)"`).exec(s)?.[1] ?? "");
    const why = attr(m[2]!, "message").replace(/\s+/g, " ").trim().slice(0, 300);
    found.push(`${mode}: ${attr(m[1]!, "file")}:${attr(m[1]!, "line")} ${attr(m[1]!, "classname")} > ${attr(m[1]!, "name")}${why ? ` (${why})` : ""}`);
  }
  return found;
}

/**
 * A pass's ten slowest files by the time their tests took (the report times each file, hooks
 * excluded): where to look first when the suite grows slower.
 */
function slowestFiles(xml: string, mode: string): string {
  const files = [...xml.matchAll(/^  <testsuite name="([^"]*)"[^>]*?\btime="([\d.]+)"/gm)].map((m) => ({ file: fromXml(m[1]!), s: Number(m[2]) }));
  if (files.length < 2) return "";
  const sum = files.reduce((a, f) => a + f.s, 0);
  const top = files.sort((a, b) => b.s - a.s).slice(0, 10);
  return `${mode}: ${files.length} files, ${Math.round(sum)} s in their tests; the slowest:\n${top.map((f) => `  ${f.s.toFixed(1).padStart(6)} s  ${f.file}`).join("\n")}\n`;
}

/**
 * The test files whose outcome can depend on the backends: those that reach test/support/env.ts
 * (where the backends of a pass are read) through their imports or the helper scripts they
 * start, followed through test/. The others (the storage node, the CLI's parsing, the real
 * entry point on its embedded defaults, pure rules) would run the same twice, so the services
 * pass leaves them to the embedded pass, which always runs. So does a file that says, in a line
 * of its own, `// One pass: <why>`: what it tests does not depend on the backends, though it
 * starts a service on them (the CLI over REST, the documentation's examples).
 */
function backendDependentFiles(): string[] {
  const testDir = import.meta.dir;
  const files = testFiles();
  const envFile = join(testDir, "support/env.ts");
  const seen = new Map<string, boolean>();
  const reaches = (file: string, path: Set<string>): boolean => {
    if (file === envFile) return true;
    if (seen.has(file)) return seen.get(file)!;
    if (path.has(file)) return false;
    path.add(file);
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {}
    const dir = file.slice(0, file.lastIndexOf("/"));
    const refs = [...text.matchAll(/from\s+"(\.{1,2}\/[^"]+\.ts)"|["'`]([^"'`]*support\/[\w-]+\.ts)["'`]/g)].map((m) =>
      m[1] ? join(dir, m[1]) : join(testDir, m[2]!.slice(m[2]!.indexOf("support/"))),
    );
    const out = refs.filter((r) => r.startsWith(testDir)).some((r) => reaches(r, path));
    path.delete(file);
    seen.set(file, out);
    return out;
  };
  const onePass = (f: string) => /^\/\/ One pass: /m.test(readFileSync(join(testDir, f), "utf8"));
  return files.filter((f) => !onePass(f) && reaches(join(testDir, f), new Set())).map((f) => `./test/${f}`);
}

/** Every test file, relative to test/. */
function testFiles(): string[] {
  return [...new Bun.Glob("**/*.test.ts").scanSync({ cwd: import.meta.dir })].filter((f) => !f.includes("node_modules")).sort();
}

/**
 * The embedded pass's files in parts of a dozen, the slow kinds first (browsers, whole
 * processes, attack runs) and the quick ones (pure rules) last, so the two streams that take
 * parts as they come free end close together.
 */
function embeddedParts(): string[][] {
  const order = ["browser", "e2e", "hardening", "clients", "compat", "contract", "integration", "unit"];
  const rank = (f: string) => {
    const at = order.indexOf(f.slice(0, f.indexOf("/")));
    return at < 0 ? order.length : at;
  };
  const files = testFiles().sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const parts: string[][] = [];
  for (let i = 0; i < files.length; i += 12) parts.push(files.slice(i, i + 12).map((f) => `./test/${f}`));
  return parts;
}

/** A pass's name as part of a file name. */
const fileName = (name: string) => name.replace(/\W+/g, "-").replace(/-+$/, "");

/**
 * A pass's output: straight to the terminal when it runs alone; into a file, printed whole when
 * the pass ends, when passes run side by side (their lines would interleave otherwise).
 */
interface Output {
  stdout: "inherit" | number;
  flush(): void;
}

function outputFor(alone: boolean, dir: string, name: string): Output {
  if (alone) return { stdout: "inherit", flush: () => {} };
  const path = join(dir, `${fileName(name)}.log`);
  // One descriptor opened for appending, so stdout and stderr keep their order in one file.
  const fd = openSync(path, "a");
  return {
    stdout: fd,
    flush: () => {
      closeSync(fd);
      try {
        say(readFileSync(path, "utf8"));
      } catch {}
    },
  };
}

/**
 * One `bun test` run. `pass` names the pass it belongs to (a part of the embedded pass is a run
 * of its own): failures are reported under it, and a part leaves the pass's summary (its counts,
 * its slowest files) to the end of the pass.
 */
async function runBunTest(name: string, env: Record<string, string>, files: string[], alone: boolean, pass = name): Promise<{ counts: Counts; xml: string }> {
  const dir = mkdtempSync(join(tmpdir(), "media-junit-"));
  const report = join(dir, "junit.xml");
  const out = outputFor(alone, dir, name);
  say(alone ? `\n=== ${name} ===\n` : `\n=== ${name}: started (its output follows when it ends) ===\n`);
  // bunfig.toml's [test] timeout is not read by bun 1.4 (tests and hooks stay at 5 s, which
  // PGlite start-up on a loaded machine exceeds); the flag is. A ceiling for a loaded machine,
  // above the waits' own (test/support/eventually.ts), which give up first and say on what.
  const timeout = `--timeout=${process.env.TEST_TIMEOUT_MS ?? "120000"}`;
  // As `npm start` runs the service: Bun's own head limit above the service's (http/server.ts).
  const proc = Bun.spawn([process.execPath, "--max-http-header-size=262144", "test", timeout, "--reporter=junit", `--reporter-outfile=${report}`, ...args, ...files], {
    env: { ...process.env, ...env },
    stdout: out.stdout,
    stderr: out.stdout,
  });
  const code = await proc.exited;
  if (!alone) say(`\n=== ${name} ===\n`);
  out.flush();
  let counts: Counts = { passed: 0, failed: code === 0 ? 0 : 1, skipped: 0 };
  let xml = "";
  try {
    xml = readFileSync(report, "utf8");
    const head = /<testsuites\b[^>]*>/.exec(xml)?.[0] ?? "";
    const attr = (n: string) => Number(new RegExp(`\\b${n}="(\\d+)"`).exec(head)?.[1] ?? 0);
    const tests = attr("tests");
    const failed = attr("failures") + attr("errors");
    const skipped = attr("skipped");
    // A crash outside any test still fails the run.
    counts = { passed: tests - failed - skipped, failed: failed || (code === 0 ? 0 : 1), skipped };
    failures.push(...failuresIn(xml, pass));
    if (pass === name) say(slowestFiles(xml, name));
  } catch {}
  // TEST_REPORTS_DIR (.ci/run sets it to its log directory) keeps each pass's report.
  if (process.env.TEST_REPORTS_DIR) {
    try {
      copyFileSync(report, join(process.env.TEST_REPORTS_DIR, `junit-${fileName(name)}.xml`));
    } catch {}
  }
  rmSync(dir, { recursive: true, force: true });
  say(`--- ${name}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  return { counts, xml };
}

const total: Counts = { passed: 0, failed: 0, skipped: 0 };
const add = (c: Counts) => {
  total.passed += c.passed;
  total.failed += c.failed;
  total.skipped += c.skipped;
};
const notes: string[] = [];

// The whole suite runs its passes (and the type check) side by side: most of a test's time is
// spent waiting on servers, workers and browsers it started, so two passes on two cores take
// little longer than the longer one alone. TEST_PARALLEL=0 runs them one after the other, with
// their output as it comes.
const sideBySide = args.length === 0 && process.env.TEST_PARALLEL !== "0";

/**
 * The run's temporary files (every test server's embedded database and storage node, copied
 * from a 41 MB template at each start) go to memory when the machine has room there: on a
 * busy disk one copy took 12-14 s and 1.6 s of CPU, against 1-2 s in /dev/shm, and PGlite's
 * fsyncs cost nothing there. TEST_TMPDIR=disk keeps them on disk. Directories of runs that
 * were killed are removed first (their names carry the runner's pid).
 */
function memoryTmpDir(): string | null {
  if (process.env.TEST_TMPDIR === "disk" || process.platform !== "linux") return null;
  const shm = "/dev/shm";
  try {
    const fs = statfsSync(shm);
    if (fs.bavail * fs.bsize < 4 * 1024 ** 3) return null;
    for (const name of readdirSync(shm)) {
      const pid = /^media-tests-(\d+)-/.exec(name)?.[1];
      if (!pid) continue;
      try {
        process.kill(Number(pid), 0);
      } catch {
        rmSync(join(shm, name), { recursive: true, force: true });
      }
    }
    const dir = mkdtempSync(join(shm, `media-tests-${process.pid}-`));
    // Open to every user, as /tmp is: tests run PostgreSQL servers of their own as `postgres`.
    chmodSync(dir, 0o1777);
    return dir;
  } catch {
    return null;
  }
}
const memoryTmp = memoryTmpDir();
if (memoryTmp) process.env.TMPDIR = memoryTmp;
const logDir = mkdtempSync(join(tmpdir(), "media-test-run-"));
const running: Promise<void>[] = [];

// The type checker counts as one test: a type error fails the run like a failing assertion.
if (process.env.TEST_TYPECHECK !== "0" && args.length === 0) {
  const out = outputFor(!sideBySide, logDir, "typecheck");
  say(`\n=== typecheck (tsc)${sideBySide ? ": started" : ""} ===\n`);
  const tsc = Bun.spawn([`${import.meta.dir}/../node_modules/.bin/tsc`, "-p", `${import.meta.dir}/..`], { stdout: out.stdout, stderr: out.stdout });
  const checked = tsc.exited.then((code) => {
    const ok = code === 0;
    if (sideBySide) say("\n=== typecheck (tsc) ===\n");
    out.flush();
    say(`--- typecheck: ${ok ? "passed" : "FAILED"}\n`);
    add({ passed: ok ? 1 : 0, failed: ok ? 0 : 1, skipped: 0 });
  });
  if (sideBySide) running.push(checked);
  else await checked;
}

async function servicesPass(): Promise<void> {
  const [pg, redis] = await Promise.all([pgReachable(), redisReachable()]);
  if (!pg || !redis) {
    const missing = [!pg && `PostgreSQL (${PG_URL})`, !redis && `Redis (${REDIS_URL})`].filter(Boolean).join(" and ");
    if (requireServices) {
      say(`\nRequired services unreachable: ${missing}\n0 passed, 1 failed\n`);
      process.exit(1);
    }
    notes.push(`NOT COVERED: ${missing} unreachable, so the PostgreSQL/Redis run (BullMQ queue, shared rate limit and idempotency store, postgres.js driver) was skipped.`);
  }
  if (!pg) return;
  const dbName = `media_test_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  const url = new URL(PG_URL);
  url.pathname = `/${dbName}`;
  const prefix = `mtest-${dbName}`;
  try {
    add(
      (await runBunTest(
        `PostgreSQL${redis ? " + Redis" : ""}`,
        {
          TEST_DATABASE_URL: url.toString(),
          ...(redis ? { TEST_REDIS_URL: REDIS_URL, TEST_REDIS_PREFIX: prefix } : {}),
        },
        // The whole suite, unless the embedded pass follows and it was not narrowed by hand.
        args.length === 0 && modes.includes("embedded") ? backendDependentFiles() : [],
        !sideBySide,
      )).counts,
    );
  } finally {
    // With the databases of single servers (startServer's ownDatabase) a killed file left behind.
    const own = await admin<{ datname: string }[]>`select datname from pg_database where datname like ${`${dbName}\\_own\\_%`}`.catch(() => []);
    for (const { datname } of [...own, { datname: dbName }]) await admin.unsafe(`drop database if exists ${datname} with (force)`).catch(() => {});
    await admin.end();
    if (redis) {
      const r = new Redis(REDIS_URL);
      let cursor = "0";
      do {
        const [next, keys] = await r.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
        cursor = next;
        if (keys.length) await r.del(...keys);
      } while (cursor !== "0");
      r.disconnect();
    }
  }
}

const EMBEDDED = "embedded (PGlite, in-process queue and stores)";
const embeddedEnv = { TEST_DATABASE_URL: "", TEST_REDIS_URL: "" };

/**
 * Side by side, the embedded pass runs in parts that two streams take as they come free: one
 * stream from the start, the other once the PostgreSQL pass is done. As one run, the embedded
 * pass (1,333 s of tests in CI) ended minutes after the PostgreSQL pass (947 s), with one core
 * idle. Two embedded files at once only while the other pass is over keeps the machine at two
 * streams, as before: two embedded files beside the PostgreSQL pass made three, and 30 minutes.
 */
const embeddedQueue = sideBySide && modes.includes("embedded") ? embeddedParts() : [];
const partsCount = embeddedQueue.length;
const embeddedRuns: { counts: Counts; xml: string }[] = [];
async function takeEmbeddedParts(): Promise<void> {
  for (let files = embeddedQueue.shift(); files; files = embeddedQueue.shift()) {
    const part = partsCount - embeddedQueue.length;
    embeddedRuns.push(await runBunTest(`${EMBEDDED}, part ${part} of ${partsCount}`, embeddedEnv, files, false, EMBEDDED));
  }
}

if (embeddedQueue.length) {
  if (modes.includes("services")) running.push(servicesPass().then(takeEmbeddedParts));
  running.push(takeEmbeddedParts());
} else {
  const embeddedPass = async () => add((await runBunTest(EMBEDDED, embeddedEnv, [], !sideBySide)).counts);
  for (const [mode, pass] of [
    ["services", servicesPass],
    ["embedded", embeddedPass],
  ] as const) {
    if (!modes.includes(mode)) continue;
    if (sideBySide) running.push(pass());
    else await pass();
  }
}
await Promise.all(running);
if (embeddedRuns.length) {
  const counts = embeddedRuns.reduce((a, r) => ({ passed: a.passed + r.counts.passed, failed: a.failed + r.counts.failed, skipped: a.skipped + r.counts.skipped }), { passed: 0, failed: 0, skipped: 0 });
  add(counts);
  say(`\n${slowestFiles(embeddedRuns.map((r) => r.xml).join("\n"), EMBEDDED)}--- ${EMBEDDED}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
}
rmSync(logDir, { recursive: true, force: true });
if (memoryTmp) rmSync(memoryTmp, { recursive: true, force: true });

for (const note of notes) say(`\n${note}\n`);
if (failures.length) say(`\nFailed:\n${failures.map((f) => `  ${f}`).join("\n")}\n`);
say(`\n${total.passed} passed, ${total.failed} failed\n`);
process.exit(total.failed > 0 ? 1 : 0);
