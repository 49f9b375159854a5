import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { enqueueJob } from "../../domain/core/jobs.ts";
import type { Logger } from "../../domain/ports/log.ts";
import type { BullQueue } from "../../worker/bullmq-queue.ts";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { parseMetrics } from "../support/prometheus.ts";
import { startServer, type TestServer } from "../support/server.ts";

/**
 * A `search.sync` job run by a process without MEILISEARCH_URL: an instance with Meilisearch
 * queued it (during a rolling change of configuration, or with one worker left unconfigured),
 * and the worker completed it having written nothing, so the documents were silently missing.
 * It fails instead, saying which setting is missing: counted as a failed run and logged.
 */
const lines: string[] = [];
const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
const log: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ log, env: { WORKER_ATTEMPTS: "1", ...(testEnv.redisUrl ? { REDIS_PREFIX: `${testEnv.redisPrefix}-sync-unconfigured` } : {}) } });
  expect(server.services.backends.search).toBe("postgres");
});
afterAll(async () => {
  if (testEnv.redisUrl) await (server?.services.queue as BullQueue | undefined)?.obliterate().catch(() => {});
  await server?.stop();
});

describe("search.sync without MEILISEARCH_URL", () => {
  test("fails, naming the setting, instead of completing as a no-op", async () => {
    const objectId = crypto.randomUUID();
    await server.services.deps.db.transaction((tx) => enqueueJob(tx, "search.sync", { orgId: crypto.randomUUID(), objectIds: [objectId] }));
    const runs = await eventually(
      async () => {
        const scrape = parseMetrics(await server.services.metrics.text());
        const failed = scrape.value("media_job_runs_total", { kind: "search.sync", outcome: "failed" });
        const completed = scrape.value("media_job_runs_total", { kind: "search.sync", outcome: "completed" });
        return failed + completed > 0 ? { failed, completed } : undefined;
      },
      { what: "the search.sync job to run" },
    );
    expect(runs).toEqual({ failed: 1, completed: 0 });
    await eventually(async () => (lines.some((l) => l.includes("search.sync") && l.includes("MEILISEARCH_URL")) ? true : undefined), { what: "the failure in the log" });
  }, 90_000);
});
