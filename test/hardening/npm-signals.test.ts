import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../support/eventually.ts";
import { privateRedis } from "../support/faults.ts";
import { freePort, START_CEILING_MS } from "../support/processes.ts";
import { seedDataDir } from "../support/server.ts";

// One pass: what reaches the process a supervisor started does not depend on the backends (the embedded ones are used).

/**
 * A supervisor (systemd, a container runtime, a process manager) starts `npm start` or
 * `npm run worker` and later sends SIGTERM to the PID it started: npm's. The signal must reach
 * the service, which drains and exits, leaving no process of it behind on its ports.
 */
const root = join(import.meta.dir, "../..");
const npm = Bun.which("npm");
const dirs: string[] = [];
const leftovers: number[] = [];

afterAll(() => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Every process below `pid`, read from /proc (children of children too). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // The command name, in parentheses, may hold spaces: the fields after it are fixed.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(name), ppid);
    } catch {
      // ended while being read
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parents) if (parent === p) (out.push(child), walk(child));
  };
  walk(pid);
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function portOpen(port: number): Promise<boolean> {
  try {
    const s = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    s.end();
    return true;
  } catch {
    return false;
  }
}

/** Starts `npm <args>` in a session of its own, as a supervisor would, and collects its output. */
function spawnNpm(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([npm!, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "info", ...env },
    stdout: "pipe",
    stderr: "pipe",
    detached: true,
  });
  let out = "";
  const read = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) out += new TextDecoder().decode(chunk);
  };
  const reading = Promise.all([read(proc.stdout as ReadableStream<Uint8Array>), read(proc.stderr as ReadableStream<Uint8Array>)]);
  return { proc, output: () => out, reading };
}

async function dataDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "media-npm-signal-"));
  dirs.push(dir);
  await seedDataDir(dir);
  return dir;
}

/** SIGTERM to npm's PID: the service logs `drained`, npm exits 0, `port` closes and nothing of the tree is left. */
async function terminateThroughNpm(run: ReturnType<typeof spawnNpm>, port: number, drained: RegExp): Promise<void> {
  const tree = descendants(run.proc.pid);
  leftovers.push(...tree);
  expect(tree.length).toBeGreaterThan(0);
  run.proc.kill("SIGTERM");
  const code = await run.proc.exited;
  await eventually(async () => (tree.every((pid) => !alive(pid)) ? true : undefined), { what: `the processes under npm (${tree.join(", ")}) to exit` });
  await run.reading;
  expect(run.output()).toMatch(drained);
  expect(code).toBe(0);
  expect(await portOpen(port)).toBe(false);
}

test.skipIf(!npm)("SIGTERM to the PID of `npm start` drains the server and leaves nothing running", async () => {
  const port = await freePort();
  const run = spawnNpm(["start"], { DATA_DIR: await dataDir(), PORT: String(port), STORAGE_PORT: String(await freePort()), JWT_SECRET: "test-jwt-secret-that-is-long-enough" });
  await eventually(async () => ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok ? true : undefined), {
    what: `npm start to answer /healthz\n${run.output()}`,
    timeoutMs: START_CEILING_MS,
    intervalMs: 200,
  });
  await terminateThroughNpm(run, port, /"msg":"requests drained"[\s\S]*"msg":"server stopped"/);
}, START_CEILING_MS + 60_000);

test.skipIf(!npm)("SIGTERM to the PID of `npm run worker` stops the worker and leaves nothing running", async () => {
  const redis = await privateRedis();
  try {
    const ops = await freePort();
    const run = spawnNpm(["run", "worker"], {
      DATA_DIR: await dataDir(),
      STORAGE_PORT: String(await freePort()),
      METRICS_PORT: String(ops),
      REDIS_URL: redis.url,
      JWT_SECRET: "test-jwt-secret-that-is-long-enough",
    });
    await eventually(async () => ((await fetch(`http://127.0.0.1:${ops}/healthz`)).ok ? true : undefined), {
      what: `npm run worker to answer /healthz\n${run.output()}`,
      timeoutMs: START_CEILING_MS,
      intervalMs: 200,
    });
    await terminateThroughNpm(run, ops, /"msg":"worker stopping[\s\S]*"msg":"worker stopped"/);
  } finally {
    await redis.destroy();
  }
}, START_CEILING_MS + 60_000);
