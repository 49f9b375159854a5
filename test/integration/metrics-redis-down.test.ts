// One pass: the Redis is a private one of this file; the database plays no part in what is tested.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BullQueue } from "../../worker/bullmq-queue.ts";
import { eventually } from "../support/eventually.ts";
import { type PrivateRedis, privateRedis, redisServerPath } from "../support/faults.ts";
import { parseMetrics, type Scrape } from "../support/prometheus.ts";
import { startServer, type TestServer } from "../support/server.ts";

/**
 * /metrics while the queue's Redis is down: the job counts come from BullMQ, and a scrape that
 * waited for them on a dead connection took over 10 s, so metrics vanished exactly during the
 * incident. A scrape answers anyway, says the queue's counts are unknown (media_jobs_unavailable
 * 1, the queue's states left out rather than zero, the outbox's count from the database kept), and
 * reports them again once Redis is back. The Redis
 * is a private one of this file; the bound asserted is generous (the counts' own wait is 1 s).
 */
const TOKEN = "metrics-redis-token-0123456789ab";
const ANSWERS_WITHIN_MS = 8_000;
let redis: PrivateRedis & { destroy(): Promise<void> };
let server: TestServer;

async function scrape(): Promise<Scrape> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(ANSWERS_WITHIN_MS) });
  expect(res.status).toBe(200);
  return parseMetrics(await res.text());
}

describe.skipIf(!redisServerPath)("/metrics with the queue's Redis down", () => {
  beforeAll(async () => {
    redis = await privateRedis();
    server = await startServer({ env: { METRICS_TOKEN: TOKEN, REDIS_URL: redis.url, REDIS_PREFIX: `metrics-down-${crypto.randomUUID().slice(0, 8)}` } });
    expect(server.services.backends.queue).toBe("bullmq");
  }, 60_000);
  afterAll(async () => {
    if (redis?.running()) await (server?.services.queue as BullQueue | undefined)?.obliterate().catch(() => {});
    await server?.stop();
    await redis?.destroy();
  });

  test("with Redis up, the job counts are there", async () => {
    const up = await scrape();
    expect(up.value("media_jobs_unavailable")).toBe(0);
    expect(up.samples("media_jobs").map((s) => s.labels.state)).toContain("waiting");
  });

  test("killed: every scrape answers, saying the queue's counts are unknown and keeping the outbox's", async () => {
    await redis.kill();
    for (let i = 0; i < 5; i++) {
      const down = await scrape();
      expect(down.value("media_jobs_unavailable")).toBe(1);
      // The database still answers: the outbox, which grows while the queue is down, is the one count left.
      expect(down.samples("media_jobs").map((s) => s.labels.state)).toEqual(["outbox"]);
      // The rest of the scrape is all there.
      expect(down.text).toContain("media_db_query_duration_seconds");
    }
  }, 60_000);

  test("hung (accepts, never answers): every scrape still answers", async () => {
    await redis.start();
    await eventually(async () => ((await scrape()).value("media_jobs_unavailable") === 0 ? true : undefined), { what: "the counts once Redis is back" });
    redis.freeze();
    try {
        for (let i = 0; i < 5; i++) {
        const hung = await scrape();
        expect(hung.value("media_jobs_unavailable")).toBe(1);
        expect(hung.samples("media_jobs").map((s) => s.labels.state)).toEqual(["outbox"]);
      }
    } finally {
      redis.thaw();
    }
    await eventually(async () => ((await scrape()).samples("media_jobs").length > 1 ? true : undefined), { what: "the counts once Redis answers again" });
  }, 60_000);
});
