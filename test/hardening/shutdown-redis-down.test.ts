import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testEnv, JWT_SECRET } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { loadConfig } from "../../app/config.ts";
import { BullQueue, PRODUCER_COMMAND_TIMEOUT_MS } from "../../worker/bullmq-queue.ts";
import { privateRedis, redisServerPath } from "../support/faults.ts";
import { Api } from "../support/http.ts";
import { png } from "../support/media-files.ts";
import { type Child, spawnScript } from "../support/processes.ts";
import { newOrg, seedDataDir, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * SIGTERM after an upload was confirmed while Redis was unreachable (issue 37, finding 5: the
 * process sat out the whole 25 s SHUTDOWN_TIMEOUT_MS, when an idle one exits in 2-5 s). The
 * confirm's job is committed to the outbox; the dispatcher's attempts to hand it to BullMQ, and
 * every close that talks to Redis, must give up within their short bounds (docs/operations.md),
 * so the process exits 0 in seconds. The job is not lost: the next start, with Redis back,
 * dispatches it and the thumbnail is made.
 *
 * Redis is a private redis-server of this test, either killed (connections refused) or frozen
 * with SIGSTOP (the kernel still accepts connections; nothing ever answers). The frozen case is
 * the one that waited for the deadline: the dispatcher's add had no deadline of its own, so the
 * pass in hand, and the shutdown waiting for it, never ended. The killed case (the add fails
 * after two refused reconnections) keeps it from coming back that way. The database is
 * the run's PostgreSQL in the services pass and PGlite in a data directory otherwise: the fault
 * is on the Redis side, which both passes configure the same way here.
 */
const children: Child[] = [];
const dirs: string[] = [];

/**
 * How long after SIGTERM the process may take. Well under SHUTDOWN_TIMEOUT_MS (25 s here, the
 * deadline the bug ran into) so a process that waits for the deadline fails, and loose enough
 * for a loaded 2-core machine: the bounds it adds up are 2 s per Redis close at most
 * (docs/operations.md) and the database's own closing.
 */
const EXIT_CEILING_MS = 15_000;
const DEADLINE_MS = 25_000;

async function start(dataDir: string, env: Record<string, string>) {
  const child = spawnScript("test/support/shutdown-process.ts", {
    DATA_DIR: dataDir,
    PORT: "0",
    STORAGE_PORT: "0",
    METRICS_PORT: "0",
    JWT_SECRET,
    LOG_LEVEL: "info",
    HOLD_MS: "0",
    SHUTDOWN_TIMEOUT_MS: String(DEADLINE_MS),
    ...(testEnv.mode === "services" ? { DATABASE_URL: testEnv.databaseUrl! } : {}),
    ...env,
  });
  children.push(child);
  const [, url] = await child.waitFor(/ready (\S+) ops (\d+)/, 120_000);
  return { child, url: url!, server: { url, api: new Api(url!, null) } as unknown as TestServer };
}

async function newDataDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "media-shutdown-redis-"));
  dirs.push(dir);
  if (testEnv.mode === "embedded") await seedDataDir(dir);
  return dir;
}

afterAll(() => {
  for (const c of children) c.proc.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!redisServerPath)("SIGTERM after a confirm while Redis is unreachable", () => {
  test("the queue's add gives up on a Redis that accepts and never answers (PRODUCER_COMMAND_TIMEOUT_MS, 2 s)", async () => {
    expect(PRODUCER_COMMAND_TIMEOUT_MS).toBe(2_000);
    const redis = await privateRedis();
    const queue = new BullQueue({ redisUrl: redis.url, redisPrefix: "shutdown-redis-down-add", worker: loadConfig({}).worker });
    try {
      await queue.counts(); // connected and ready
      redis.freeze();
      // A ceiling, not a measurement: without a command deadline the add never settles.
      const outcome = await Promise.race([
        queue.add({ id: crypto.randomUUID(), name: "search.sync", data: { orgId: crypto.randomUUID(), objectIds: [] } }).then(() => "added", (err: Error) => err.message),
        Bun.sleep(EXIT_CEILING_MS).then(() => "still waiting"),
      ]);
      expect(outcome).toContain("timed out");
    } finally {
      redis.thaw();
      await queue.close();
      await redis.destroy();
    }
  }, 60_000);

  for (const how of ["killed", "frozen"] as const)
    test(`Redis ${how}: the process exits 0 in seconds, and the next start dispatches the confirmed upload's job`, async () => {
      const redis = await privateRedis();
      try {
        const dir = await newDataDir();
        const env = { REDIS_URL: redis.url, REDIS_PREFIX: `shutdown-redis-down-${how}` };
        const first = await start(dir, env);
        const org = await newOrg(first.server);
        const bucket = (await org.admin.post("/api/buckets", { name: `redis-${how}` })).body;

        if (how === "killed") await redis.kill();
        else redis.freeze();
        // The guards fail open: requests go on, and the confirm commits its job to the outbox.
        await eventually(async () => ((await org.admin.get("/api/buckets")).status === 200 ? true : undefined), { what: "a request without Redis" });
        const object = await upload(org.admin, bucket.id, "confirmed-while-down.png", new Uint8Array(await png(64, 64)), { contentType: "image/png" });
        // Let the dispatcher's kick meet the missing Redis (and a poll or two after it).
        await Bun.sleep(3000);
        expect(first.child.output()).not.toContain(`started ${object.id}`);

        const signalled = performance.now();
        first.child.proc.kill("SIGTERM");
        const code = await Promise.race([first.child.proc.exited, Bun.sleep(DEADLINE_MS + 10_000).then(() => "still running" as const)]);
        const tookMs = performance.now() - signalled;
        // 1 would mean the 25 s deadline cut the shutdown short: the bug.
        expect({ code, deadlinePassed: first.child.errors().includes("shutdown deadline passed") }).toEqual({ code: 0, deadlinePassed: false });
        expect(tookMs).toBeLessThan(EXIT_CEILING_MS);

        // Redis back (empty: this one keeps nothing), the next start hands the outbox row over.
        if (how === "killed") await redis.start();
        else redis.thaw();
        const next = await start(dir, env);
        await next.child.waitFor(new RegExp(`finished ${object.id}`), 60_000);
        const api = new Api(next.url, org.adminKey.secret);
        await eventually(async () => ((await api.get(`/api/media/${object.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "the thumbnail after Redis returned" });
        next.child.proc.kill("SIGTERM");
        expect(await next.child.proc.exited).toBe(0);
      } finally {
        await redis.destroy();
      }
    }, 180_000);
});
