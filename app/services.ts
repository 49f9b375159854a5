import { openDatabase, openPool } from "../db/client.ts";
import { type Clock, systemClock } from "../domain/core/clock.ts";
import type { Deps } from "../domain/core/deps.ts";
import type { Logger } from "../domain/ports/log.ts";
import type { JobQueue, Processors } from "../domain/ports/queue.ts";
import type { ObjectStorage } from "../domain/ports/storage.ts";
import { BullQueue, startBullWorker } from "../worker/bullmq-queue.ts";
import { startMaintenance } from "../worker/maintenance.ts";
import { MemoryQueue } from "../worker/memory-queue.ts";
import { OutboxDispatcher, pendingOutboxRows } from "../worker/outbox.ts";
import { processorsFor } from "../worker/processors.ts";
import { type Config, databaseLocation } from "./config.ts";
import { createLogger } from "./log.ts";
import { memoryGuardStores } from "../http/guards/stores/memory.ts";
import type { GuardStores } from "../http/guards/stores/ports.ts";
import { redisGuardStores } from "../http/guards/stores/redis.ts";
import { localCredentialCache, sharedCredentialCache } from "./credential-cache.ts";
import { openRedis, type RedisConnection } from "./redis.ts";
import { openSearch } from "./search.ts";
import { ApiCallMeter } from "../domain/usage/meter.ts";
import { OrgConcurrency } from "../domain/guards/org-concurrency.ts";
import { AuditWriter } from "../domain/audit/audit-writer.ts";
import { ReplicaReads } from "../db/replicas.ts";
import { ReadYourEgress, ReadYourWritesAudit } from "./read-your-writes.ts";
import { EgressLedger } from "../domain/usage/egress-ledger.ts";
import { UsageRollup } from "../domain/usage/usage-rollup.ts";
import { applyAutoCapacity } from "../domain/billing/billing.ts";
import { StripePayments } from "../payments/stripe.ts";
import { openStorage } from "./storage.ts";
import pkg from "../package.json" with { type: "json" };
import { cpuJobsInHand, jobTracing } from "../domain/core/jobs.ts";
import { type ReadinessProbe, readinessProbe } from "./health.ts";
import { Metrics } from "./metrics.ts";
import { meters, observeProcessors, observeSearch, sqlInstrument, storageInstrument } from "./observe.ts";
import { startOpsServer } from "./ops-server.ts";
import { jobTraceparent, startTracing } from "./tracing.ts";
import { mediaImages } from "../worker/derivatives/transform.ts";
import { nicedHost } from "../worker/derivatives/render-pool.ts";

/**
 * "server": `npm start` (the API; runs jobs itself unless REDIS_URL is set with
 * WORKER_INLINE=false). "worker": `npm run worker` (BullMQ only: runs jobs, serves nothing).
 * "task": a one-off command beside running servers (`npm run reconcile`): runs no jobs, no
 * housekeeping and no listener; the jobs it records are dispatched by the servers' outbox poll.
 */
export type Role = "server" | "worker" | "task";

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
  /** Folds egress events and storage deltas into the counters (reads are exact without it). */
  rollup: UsageRollup;
  queue: JobQueue;
  outbox: OutboxDispatcher;
  maintenance: { runOnce(): Promise<void> };
  metrics: Metrics;
  readiness: ReadinessProbe;
  /** The port of the METRICS_PORT listener, when there is one. */
  opsPort: number | null;
  close(): Promise<void>;
}

export interface ServiceOverrides {
  clock?: Clock;
  log?: Logger;
  role?: Role;
  /** Called when another instance holds the migration lock, before waiting for it: npm start answers the probes meanwhile. */
  onMigrationWait?: () => void;
  /** Called before the METRICS_PORT listener starts: npm start's starting listener lets the port go. */
  beforeOpsListener?: () => Promise<void>;
  /** The job table to run (tests wrap it to slow a job down or make it crash). */
  processors?: (deps: Deps) => Processors;
}

/**
 * Connections of a server's search pool: above ORG_MAX_SEARCHES' default of 3, so one
 * organization at its cap leaves room for others' searches, and well under the main pool's 10.
 */
const SEARCH_POOL_SIZE = 5;

/** Chooses and opens every adapter once, from configuration. Closing reverses the order. */
export async function createServices(config: Config, overrides: ServiceOverrides = {}): Promise<Services> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const role = overrides.role ?? "server";
  if (role === "worker" && !config.redisUrl) {
    throw new Error("The worker process needs REDIS_URL: without Redis, jobs run inside the server (npm start)");
  }
  const closers: (() => Promise<void>)[] = [];
  try {
    const metrics = new Metrics({ role });
    if (config.ops.tracing) {
      // Closed last, so the spans of shutting down are flushed too.
      const tracing = await startTracing(config.ops.tracing, log, pkg.version);
      closers.push(tracing.stop);
    }
    jobTracing.handOver = jobTraceparent;
    // One-off tasks (npm run reconcile) may legitimately run long statements over a whole bucket.
    const statementTimeoutMs = role === "task" ? 0 : config.statementTimeoutMs;
    const database = await openDatabase({
      ...databaseLocation(config),
      statementTimeoutMs,
      instrument: sqlInstrument(metrics, "postgresql"),
      onMigrationWait: () => {
        log.info("waiting for another instance's migration (advisory lock)");
        overrides.onMigrationWait?.();
      },
    });
    closers.push(database.close);
    // Read replicas (db/replicas.ts): PostgreSQL only, the embedded database has none; closed before the primary.
    let reads: ReplicaReads | null = null;
    // Servers only: workers and tasks run none of the reads that may use one.
    if (role === "server" && database.kind === "postgres" && config.databaseReadUrls.length > 0) {
      reads = new ReplicaReads({
        primaryUrl: config.databaseUrl!,
        urls: config.databaseReadUrls,
        maxLagMs: config.readMaxLagMs,
        poolSize: 10,
        statementTimeoutMs,
        searchPoolSize: SEARCH_POOL_SIZE,
        searchStatementTimeoutMs: config.searchStatementTimeoutMs,
        instrument: sqlInstrument(metrics, "postgresql"),
        onChange: (replica, serving) =>
          serving ? log.info("read replica serves reads", { replica }) : log.warn("read replica serves no reads (behind by more than DB_READ_MAX_LAG_MS, or down); its reads go to the primary", { replica }),
      });
      closers.push(() => reads!.close());
      await reads.start();
    }
    const opened = await openStorage(config, storageInstrument(metrics));
    closers.push(opened.close);
    const storage: ObjectStorage = opened.storage;
    const redis = config.redisUrl ? await openRedis(config.redisUrl, log) : null;
    if (redis) closers.push(redis.close);
    const guardStores = redis ? redisGuardStores(redis.client, config.redisPrefix) : memoryGuardStores();
    closers.push(guardStores.close);
    const shared = redis ? await sharedCredentialCache(redis, config.redisPrefix, log) : null;
    if (shared) closers.push(shared.close);
    const credentials = shared?.cache ?? localCredentialCache();
    const jobs = { kick: () => (role === "task" ? undefined : outbox.kick()) };
    // PostgreSQL searches on a pool of their own (SEARCH_POOL_SIZE connections, the search
    // deadline on each): a round trip cheaper than setting it per search, and however many
    // organizations search at once, the other statements keep the main pool.
    // On PGlite, searches take the background lane of its one connection (db/pglite-lanes.ts).
    let searchDb = database.background ?? null;
    if (role === "server" && database.kind === "postgres" && !config.meilisearch && config.searchStatementTimeoutMs > 0) {
      const pool = openPool({ url: config.databaseUrl!, poolSize: SEARCH_POOL_SIZE, statementTimeoutMs: config.searchStatementTimeoutMs, instrument: sqlInstrument(metrics, "postgresql") });
      closers.push(pool.close);
      searchDb = pool.db;
    }
    const search = observeSearch(await openSearch(config, database.db, log, database.kind, searchDb), metrics);
    const payments = config.stripe.secretKey ? new StripePayments({ secretKey: config.stripe.secretKey, apiUrl: config.stripe.apiUrl }) : null;
    const oc = config.orgConcurrency;
    const concurrency = { search: new OrgConcurrency("searches", oc.searches, oc.waitMs, oc.searchBudget), render: new OrgConcurrency("renders", oc.renders, oc.waitMs, oc.renderBudget) };
    // On-the-fly renders at the worker's lower priority, in a child process started on the first one.
    const images = mediaImages(storage, config.worker, config.worker.nice > 0 ? nicedHost({ nice: config.worker.nice, idle: config.worker.schedIdle }, config.worker.toolTimeoutMs) : null);
    // Its last events are written on shutdown, after the closers pushed later and before the database closes.
    const egress = reads ? new ReadYourEgress(database.db, log, reads) : new EgressLedger(database.db, log);
    closers.push(() => egress.flush());
    const audit = reads ? new ReadYourWritesAudit(database.db, reads) : new AuditWriter(database.db);
    const deps: Deps = { db: database.db, ...(reads ? { reads } : {}), clock: overrides.clock ?? systemClock, log, config, jobs, storage, search, payments, credentials, concurrency, egress, audit, meters: meters(metrics), images };
    const processors = observeProcessors((overrides.processors ?? processorsFor)(deps), metrics);
    const w = config.worker;

    let queue: JobQueue;
    let where: Services["backends"]["jobs"];
    // The queues on QUEUE_REDIS_URL (REDIS_URL unless set); the guards above stay on REDIS_URL.
    if (config.redisUrl) {
      const bull = new BullQueue(config);
      closers.push(() => bull.close());
      queue = bull;
      where = role === "worker" || (role === "server" && w.inline) ? "here" : "elsewhere";
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
      const memory = new MemoryQueue(processors, log, { slots: { cpu: cpuJobsInHand(w.concurrency), io: w.ioConcurrency }, attempts: w.attempts, backoffMs: w.backoffMs, lockMs: w.lockMs, ledger });
      closers.push(() => memory.close());
      queue = memory;
      where = role === "task" ? "elsewhere" : "in-process";
    }

    const outbox = new OutboxDispatcher(deps, queue, { lockMs: w.lockMs });
    if (role !== "task") outbox.start();
    closers.push(() => outbox.stop());
    const maintenance = role === "task" ? { runOnce: async () => {}, stop: async () => {} } : startMaintenance(deps);
    closers.push(() => maintenance.stop());
    // Closed before the database (closers run in reverse): the last counts are written on shutdown.
    const apiCalls = new ApiCallMeter(deps);
    apiCalls.start();
    closers.push(() => apiCalls.stop());
    // Folds what the egress ledger and confirms append; what it has not folded when it stops,
    // reads still count (usage/report.ts). Tasks-only processes leave it to the API.
    const rollup = new UsageRollup(deps, (tx, orgId, after) => applyAutoCapacity(deps, tx, orgId, after, deps.clock.now()));
    if (role !== "task") rollup.start();
    closers.push(() => rollup.stop());
    metrics.observe({ pool: database.pool, jobs: jobCounts(deps, queue) });
    // The API serves while Redis is down (guards fail open, jobs wait in the outbox): not a reason to take a server out of rotation. A worker cannot work without it.
    // A queue on a Redis of its own is checked on its own: a worker cannot run without it, a server keeps it in the outbox meanwhile.
    const ownQueueRedis = queue instanceof BullQueue && config.queueRedisUrl !== config.redisUrl ? queue : null;
    const readiness = readinessProbe(deps, {
      redis,
      queue: ownQueueRedis,
      timeoutMs: config.ops.readyTimeoutMs,
      database: database.kind,
      failOpen: role === "server" ? ["redis", "queue"] : [],
    });
    let opsPort: number | null = null;
    if (config.ops.metricsPort !== null && role !== "task") {
      await overrides.beforeOpsListener?.();
      const ops = startOpsServer({ metrics, readiness }, { host: config.host, port: config.ops.metricsPort });
      opsPort = ops.port;
      closers.push(ops.stop);
    }
    return {
      metrics,
      readiness,
      opsPort,
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
      rollup,
      close: async () => {
        for (const close of closers.reverse()) await close().catch((err) => log.warn("close failed", { error: String(err) }));
      },
    };
  } catch (err) {
    for (const close of closers.reverse()) await close().catch(() => {});
    throw err;
  }
}

/** Queue depth for the metrics: what the queue holds by state, and outbox rows not yet handed to it. */
function jobCounts(deps: Deps, queue: JobQueue): (() => Promise<Record<string, number>>)[] {
  const held = (queue as { counts?: () => Promise<Record<string, number>> }).counts?.bind(queue);
  return [...(held ? [held] : []), async () => ({ outbox: await pendingOutboxRows(deps) })];
}
