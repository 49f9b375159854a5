import { openDatabase } from "../db/client.ts";
import { type Clock, systemClock } from "../domain/core/clock.ts";
import type { Deps } from "../domain/core/deps.ts";
import type { Logger } from "../domain/ports/log.ts";
import type { JobQueue, Processors } from "../domain/ports/queue.ts";
import type { ObjectStorage } from "../domain/ports/storage.ts";
import { BullQueue, startBullWorker } from "../worker/bullmq-queue.ts";
import { startMaintenance } from "../worker/maintenance.ts";
import { MemoryQueue } from "../worker/memory-queue.ts";
import { OutboxDispatcher } from "../worker/outbox.ts";
import { processorsFor } from "../worker/processors.ts";
import type { Config } from "./config.ts";
import { createLogger } from "./log.ts";
import { memoryGuardStores } from "../http/guards/stores/memory.ts";
import type { GuardStores } from "../http/guards/stores/ports.ts";
import { redisGuardStores } from "../http/guards/stores/redis.ts";
import { localCredentialCache, sharedCredentialCache } from "./credential-cache.ts";
import { openRedis, type RedisConnection } from "./redis.ts";
import { openSearch } from "./search.ts";
import { ApiCallMeter } from "../domain/usage/meter.ts";
import { StripePayments } from "../payments/stripe.ts";
import { openStorage } from "./storage.ts";
import { mediaImages } from "../worker/derivatives/transform.ts";
import { flushRenderEgress } from "../domain/derivatives/render.ts";

/**
 * "server": `npm start` (the API; runs jobs itself unless REDIS_URL is set with
 * WORKER_INLINE=false). "worker": `npm run worker` (BullMQ only: runs jobs, serves nothing).
 */
export type Role = "server" | "worker";

export interface Services {
  deps: Deps;
  /** What was chosen, for the start-up log and tests. */
  backends: {
    database: "postgres" | "pglite";
    queue: "memory" | "bullmq";
    /** Where this process's jobs run: "in-process" queue, a BullMQ worker "here", or "elsewhere" (npm run worker). */
    jobs: "in-process" | "here" | "elsewhere";
    storage: string;
    search: string;
    guards: "memory" | "redis";
  };
  /** The request-path Redis connection (fail-fast), when REDIS_URL is set. */
  redis: RedisConnection | null;
  /** Rate limit and idempotency stores, for rest/guards. */
  guardStores: GuardStores;
  /** API-call counts in memory; `flush()` writes them (tests), `close()` flushes what is left. */
  apiCalls: ApiCallMeter;
  queue: JobQueue;
  outbox: OutboxDispatcher;
  maintenance: { runOnce(): Promise<void> };
  close(): Promise<void>;
}

export interface ServiceOverrides {
  clock?: Clock;
  log?: Logger;
  role?: Role;
  /** The job table to run (tests wrap it to slow a job down or make it crash). */
  processors?: (deps: Deps) => Processors;
}

/** Chooses and opens every adapter once, from configuration. Closing reverses the order. */
export async function createServices(config: Config, overrides: ServiceOverrides = {}): Promise<Services> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const role = overrides.role ?? "server";
  if (role === "worker" && !config.redisUrl) {
    throw new Error("The worker process needs REDIS_URL: without Redis, jobs run inside the server (npm start)");
  }
  const closers: (() => Promise<void>)[] = [];
  try {
    const database = await openDatabase({ url: config.databaseUrl ?? undefined, dataDir: `${config.dataDir}/db` });
    closers.push(database.close);
    const opened = await openStorage(config);
    closers.push(opened.close);
    const storage: ObjectStorage = opened.storage;
    const redis = config.redisUrl ? await openRedis(config.redisUrl, log) : null;
    if (redis) closers.push(redis.close);
    const guardStores = redis ? redisGuardStores(redis.client, config.redisPrefix) : memoryGuardStores();
    closers.push(guardStores.close);
    const shared = redis ? await sharedCredentialCache(redis, config.redisPrefix, log) : null;
    if (shared) closers.push(shared.close);
    const credentials = shared?.cache ?? localCredentialCache();
    const jobs = { kick: () => outbox.kick() };
    const search = await openSearch(config, database.db, log);
    const payments = config.stripe.secretKey ? new StripePayments({ secretKey: config.stripe.secretKey, apiUrl: config.stripe.apiUrl }) : null;
    const deps: Deps = { db: database.db, clock: overrides.clock ?? systemClock, log, config, jobs, storage, search, payments, credentials, images: mediaImages(storage, config.worker) };
    const processors = (overrides.processors ?? processorsFor)(deps);
    const w = config.worker;

    let queue: JobQueue;
    let where: Services["backends"]["jobs"];
    if (config.redisUrl) {
      const bull = new BullQueue(config);
      closers.push(() => bull.close());
      queue = bull;
      where = role === "worker" || w.inline ? "here" : "elsewhere";
      if (where === "here") {
        const worker = startBullWorker(config, processors, log);
        closers.push(() => worker.close());
      }
    } else {
      // The in-process queue reports to the outbox, which is created just below.
      const ledger = {
        settled: (id: string, error: string | null) => outbox.settled(id, error),
        released: (ids: string[]) => outbox.released(ids),
        renewed: (ids: string[]) => outbox.renewed(ids),
      };
      const memory = new MemoryQueue(processors, log, { concurrency: w.concurrency, attempts: w.attempts, backoffMs: w.backoffMs, lockMs: w.lockMs, ledger });
      closers.push(() => memory.close());
      queue = memory;
      where = "in-process";
    }

    const outbox = new OutboxDispatcher(deps, queue, { lockMs: w.lockMs });
    outbox.start();
    closers.push(() => outbox.stop());
    const maintenance = startMaintenance(deps);
    closers.push(() => maintenance.stop());
    // Closed before the database (closers run in reverse): the last counts are written on shutdown.
    const apiCalls = new ApiCallMeter(deps);
    apiCalls.start();
    closers.push(() => apiCalls.stop());
    closers.push(() => flushRenderEgress(deps));
    return {
      deps,
      queue,
      outbox,
      maintenance,
      backends: {
        database: database.kind,
        queue: config.redisUrl ? "bullmq" : "memory",
        jobs: where,
        storage: opened.embedded ? `embedded at ${opened.endpoint}` : opened.endpoint,
        search: search.name,
        guards: guardStores.kind,
      },
      redis,
      guardStores,
      apiCalls,
      close: async () => {
        for (const close of closers.reverse()) await close().catch((err) => log.warn("close failed", { error: String(err) }));
      },
    };
  } catch (err) {
    for (const close of closers.reverse()) await close().catch(() => {});
    throw err;
  }
}
