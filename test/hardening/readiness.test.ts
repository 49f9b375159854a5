import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalS3, startLocalS3 } from "../../storage/local-s3/index.ts";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import { type FaultProxy, faultProxy, type PrivatePostgres, privatePostgres, privatePostgresUnavailable, type PrivateRedis, privateRedis, redisServerPath } from "../support/faults.ts";
import { type Child, freePort, spawnScript, START_CEILING_MS, TEST_PICTURE_PRIORITY } from "../support/processes.ts";
import { startServer, type TestServer } from "../support/server.ts";

/**
 * /readyz of the server and of `npm run worker` follow their dependencies: each of
 * PostgreSQL, Redis and storage is stopped in turn (private instances of this file; the run's
 * own services are never disturbed), the answer turns 503 naming it, promptly, and turns 200
 * again once it is back. /healthz stays 200 throughout: the process itself is alive.
 */
const READY_TIMEOUT_MS = 1000;
/** Not a timing assertion: a bound far above the probe's own deadline, so a hung probe fails the test. */
const HANG_MS = 8000;
const credentials = { accessKeyId: "READINESSKEY", secretAccessKey: "readiness-secret-0123456789" };

const unavailable = privatePostgresUnavailable ?? (redisServerPath ? null : "redis-server is not installed");

interface Probe {
  status: number;
  body: { status: string; failed?: string[]; checks: Record<string, { ok: boolean; error?: string }> };
}

async function probe(base: string, path = "/readyz"): Promise<Probe> {
  const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(HANG_MS) });
  return { status: res.status, body: await res.json() };
}

/** A process the probes reach: when it has exited, a wait on it says so and what it wrote. */
const exited = new Map<string, () => string | null>();

/** Throws, saying so, when the process at `base` has exited: a wait on it then names the cause. */
function stillRunning(base: string): void {
  const gone = exited.get(base)?.();
  if (gone) throw new Error(gone);
}

async function becomes(base: string, expected: { status: number; failed?: string[] }, what: string): Promise<Probe> {
  return eventually(
    async () => {
      stillRunning(base);
      const p = await probe(base);
      if (p.status !== expected.status) return undefined;
      if (expected.failed && JSON.stringify(p.body.failed) !== JSON.stringify(expected.failed)) return undefined;
      return p;
    },
    { what, timeoutMs: WAIT_CEILING_MS, intervalMs: 100 },
  );
}

describe.skipIf(unavailable !== null)(`readiness follows PostgreSQL, Redis and storage${unavailable ? ` (skipped: ${unavailable})` : ""}`, () => {
  let pg: PrivatePostgres;
  let redis: PrivateRedis & { destroy(): Promise<void> };
  let dir: string;
  let storagePort: number;
  let node: LocalS3 | null = null;
  let proxy: FaultProxy;
  let server: TestServer;
  let worker: Child;
  let workerBase: string;

  const startNode = async () => {
    node = await startLocalS3({ dir, port: storagePort, credentials: [credentials] });
  };

  beforeAll(async () => {
    [pg, redis] = await Promise.all([privatePostgres(), privateRedis()]);
    dir = mkdtempSync(join(tmpdir(), "media-readiness-s3-"));
    storagePort = await freePort();
    await startNode();
    proxy = faultProxy(storagePort);
    const env = {
      DATABASE_URL: pg.url,
      REDIS_URL: redis.url,
      REDIS_PREFIX: "readiness",
      S3_ENDPOINT: proxy.url,
      S3_ACCESS_KEY_ID: credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      S3_TIMEOUT_MS: "1000",
      READY_TIMEOUT_MS: String(READY_TIMEOUT_MS),
    };
    server = await startServer({ embedded: true, env: { ...env, WORKER_INLINE: "false" } });
    const workerPort = await freePort();
    // At normal priority as every test's worker: at its default niceness (10) beside four busy
    // loops it had not answered /healthz 60 s after its start.
    worker = spawnScript("worker/main.ts", { ...env, ...TEST_PICTURE_PRIORITY, DATA_DIR: server.config.dataDir, METRICS_PORT: String(workerPort) });
    workerBase = `http://127.0.0.1:${workerPort}`;
    exited.set(workerBase, () => (worker.proc.exitCode === null && !worker.proc.signalCode ? null : `the worker exited (${worker.proc.exitCode ?? worker.proc.signalCode}); its stderr ends: ${worker.errors().slice(-1500)}`));
    await eventually(
      async () => {
        stillRunning(workerBase);
        return (await fetch(`${workerBase}/healthz`)).ok ? true : undefined;
      },
      { what: "the worker's /healthz after its start", timeoutMs: START_CEILING_MS },
    );
  }, START_CEILING_MS + 2 * WAIT_CEILING_MS);

  afterAll(async () => {
    worker?.proc.kill("SIGKILL");
    await server?.stop();
    proxy?.stop();
    await node?.stop();
    await pg?.destroy();
    await redis?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("all up: both processes are ready and say what they checked", async () => {
    for (const base of [server.url, workerBase]) {
      // Each check has READY_TIMEOUT_MS (1 s): on a busy machine a process just started can miss it once.
      const ready = await becomes(base, { status: 200 }, "the process to be ready");
      expect(ready.status).toBe(200);
      expect(ready.body.status).toBe("ready");
      expect(Object.keys(ready.body.checks).sort()).toEqual(["postgres", "redis", "storage"]);
    }
  });

  test("PostgreSQL stopped: 503 naming postgres, on both; ready again once it is back", async () => {
    await pg.stop();
    for (const base of [server.url, workerBase]) {
      const down = await becomes(base, { status: 503, failed: ["postgres"] }, "postgres to be reported down");
      expect(down.body.status).toBe("unavailable");
      expect(down.body.checks.redis!.ok).toBe(true);
      // The answer names the failure, not the driver's message (it carries addresses).
      expect(JSON.stringify(down.body)).not.toMatch(/127\.0\.0\.1|ECONN/);
      expect((await probe(base, "/healthz")).status).toBe(200);
    }
    await pg.start();
    for (const base of [server.url, workerBase]) await becomes(base, { status: 200 }, "postgres to be reported back");
  }, 3 * WAIT_CEILING_MS);

  test("Redis killed: the worker answers 503 naming redis; the server, which serves without it, stays ready naming it degraded; both whole again once it is back", async () => {
    await redis.kill();
    await becomes(workerBase, { status: 503, failed: ["redis"] }, "redis to be reported down by the worker");
    const degraded = await eventually(
      async () => {
        const p = await probe(server.url);
        return (p.body as { degraded?: string[] }).degraded ? p : undefined;
      },
      { what: "redis to be reported degraded by the server", timeoutMs: WAIT_CEILING_MS, intervalMs: 100 },
    );
    expect(degraded.status).toBe(200);
    expect(degraded.body).toMatchObject({ status: "ready", degraded: ["redis"], checks: { redis: { ok: false } } });
    await redis.start();
    await becomes(workerBase, { status: 200 }, "redis to be reported back by the worker");
    await eventually(async () => ((await probe(server.url)).body as { degraded?: string[] }).degraded ? undefined : true, { what: "redis to be reported back by the server", timeoutMs: WAIT_CEILING_MS });
  }, 3 * WAIT_CEILING_MS);

  test("storage stopped, then hung: 503 naming storage within the probe's deadline; ready again once it answers", async () => {
    await node!.stop();
    node = null;
    for (const base of [server.url, workerBase]) await becomes(base, { status: 503, failed: ["storage"] }, "storage to be reported down");
    await startNode();
    for (const base of [server.url, workerBase]) await becomes(base, { status: 200 }, "storage to be reported back");

    proxy.setMode("hang");
    const hung = await becomes(server.url, { status: 503, failed: ["storage"] }, "hung storage to be reported");
    expect(hung.body.checks.storage!.error).toContain(`${READY_TIMEOUT_MS} ms`);
    proxy.setMode("pass");
    await becomes(server.url, { status: 200 }, "storage to answer again");
  }, 3 * WAIT_CEILING_MS);
});
