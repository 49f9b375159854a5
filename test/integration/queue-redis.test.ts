// One pass: it starts its own two Redis servers; the database plays no part in where the keys go.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Redis from "ioredis";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../app/config.ts";
import { createLogger } from "../../app/log.ts";
import { createServices } from "../../app/services.ts";
import { eventually } from "../support/eventually.ts";
import { privateRedis, type PrivateRedis } from "../support/faults.ts";
import { newOrg, seedDataDir, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { pictureWithThumbnail } from "../support/upload.ts";

/**
 * QUEUE_REDIS_URL: the BullMQ queues and their fairness counters on a Redis of their own, the
 * rate limits, idempotency keys and credential cache on REDIS_URL's.
 */
type Destroyable = PrivateRedis & { destroy(): Promise<void> };
let guards: Destroyable;
let queues: Destroyable;
let server: TestServer;
let org: TestOrg;
const PREFIX = "queue-redis-test";

const keysOn = async (r: Destroyable) => {
  const client = new Redis(r.url);
  try {
    return await client.keys(`${PREFIX}:*`);
  } finally {
    client.disconnect();
  }
};

beforeAll(async () => {
  [guards, queues] = await Promise.all([privateRedis(), privateRedis()]);
  server = await startServer({ env: { REDIS_URL: guards.url, QUEUE_REDIS_URL: queues.url, REDIS_PREFIX: PREFIX, RATE_LIMIT_PER_MINUTE: "1000" } });
  org = await newOrg(server);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await Promise.all([guards?.destroy(), queues?.destroy()]);
});

describe("QUEUE_REDIS_URL", () => {
  test("defaults to REDIS_URL; set, it needs REDIS_URL beside it", () => {
    expect(loadConfig({ REDIS_URL: "redis://a:6379" }).queueRedisUrl).toBe("redis://a:6379");
    expect(loadConfig({ REDIS_URL: "redis://a:6379", QUEUE_REDIS_URL: "redis://b:6379" }).queueRedisUrl).toBe("redis://b:6379");
    expect(loadConfig({}).queueRedisUrl).toBeNull();
    expect(() => loadConfig({ QUEUE_REDIS_URL: "redis://b:6379" })).toThrow(/QUEUE_REDIS_URL: needs REDIS_URL/);
  });

  test("jobs run through the queue Redis; the guards stay on REDIS_URL's", async () => {
    expect(server.services.backends.queue).toBe("bullmq");
    // A keyed call: its idempotency record is kept on the guards' Redis for hours.
    const idempotencyKey = crypto.randomUUID();
    expect((await org.admin.post("/api/buckets", { name: "keyed" }, { "idempotency-key": idempotencyKey })).status).toBe(201);
    // An upload's thumbnail is a job: it goes through the queues and comes back done.
    await pictureWithThumbnail(org.admin, "queued");
    const [onGuards, onQueues] = await Promise.all([keysOn(guards), keysOn(queues)]);
    const isQueueKey = (k: string) => k.startsWith(`${PREFIX}:jobs`) || k.startsWith(`${PREFIX}:fair`);
    expect(onQueues.some((k) => k.startsWith(`${PREFIX}:jobs-cpu:`))).toBe(true);
    expect(onQueues.filter((k) => !isQueueKey(k))).toEqual([]);
    expect(onGuards.filter(isQueueKey)).toEqual([]);
    // The guards write there: the keyed call's record (the rate limit's counters are there too,
    // but at 1,000 a minute each lives only tens of milliseconds past the last call).
    expect(onGuards.filter((k) => k.startsWith(`${PREFIX}:idem:`))).toHaveLength(1);
    expect(onQueues.filter((k) => k.startsWith(`${PREFIX}:idem:`))).toEqual([]);
  });

  test("readiness asks the queues' own Redis: down, a server stays ready naming queue degraded (jobs wait in the outbox); a worker is not ready", async () => {
    const dir = mkdtempSync(join(tmpdir(), "media-queue-redis-worker-"));
    await seedDataDir(dir);
    const worker = await createServices(loadConfig({ DATA_DIR: dir, JWT_SECRET: "queue-redis-test-jwt-secret-long-enough", STORAGE_PORT: "0", LOG_LEVEL: "error", REDIS_URL: guards.url, QUEUE_REDIS_URL: queues.url, REDIS_PREFIX: PREFIX }), {
      role: "worker",
      log: createLogger("error"),
    });
    try {
      const up = await worker.readiness.check();
      expect({ ready: up.ready, checks: Object.keys(up.checks).sort() }).toEqual({ ready: true, checks: ["postgres", "queue", "redis", "storage"] });
      await queues.kill();
      const serving = await eventually(async () => {
        const r = await server.services.readiness.check();
        return r.degraded.includes("queue") ? r : undefined;
      }, { what: "the server to name the queue degraded" });
      expect({ ready: serving.ready, degraded: serving.degraded, failed: serving.failed }).toEqual({ ready: true, degraded: ["queue"], failed: [] });
      const down = await eventually(async () => {
        const r = await worker.readiness.check();
        return r.failed.includes("queue") ? r : undefined;
      }, { what: "the worker to name the queue down" });
      expect({ ready: down.ready, failed: down.failed }).toEqual({ ready: false, failed: ["queue"] });
      await queues.start();
      await eventually(async () => ((await worker.readiness.check()).ready ? true : undefined), { what: "the worker ready again" });
    } finally {
      await worker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
