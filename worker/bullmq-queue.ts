import { type Job, Queue, UnrecoverableError, Worker } from "bullmq";
import Redis from "ioredis";
import type { Config } from "../app/config.ts";
import { cpuJobsInHand, JOB_CLASSES, type JobClass, type JobName, jobClassOf } from "../domain/core/jobs.ts";
import type { Logger } from "../domain/ports/log.ts";
import { type JobQueue, PermanentJobFailure, type Processors, type QueuedJob } from "../domain/ports/queue.ts";
import { FairnessCounters, fairPriority, orgOf } from "./fair-share.ts";

/**
 * What the queues need of the configuration. `queueRedisUrl` (QUEUE_REDIS_URL, else REDIS_URL)
 * is where they live; callers that build a partial configuration may name only `redisUrl`.
 */
export type QueueConfig = Pick<Config, "redisUrl" | "redisPrefix" | "worker"> & { queueRedisUrl?: string | null };
const queueUrl = (config: QueueConfig) => config.queueRedisUrl ?? config.redisUrl;

/** One queue per job class (domain/core/jobs.ts); its keys sit under REDIS_PREFIX (`<prefix>:jobs-cpu:*`, `<prefix>:jobs-io:*`). */
export const queueName = (c: JobClass) => `jobs-${c}`;

/**
 * The one queue of the releases before job classes. Their API instances still add to it during
 * a rolling upgrade, so workers of this release drain it too (at WORKER_CONCURRENCY, as the
 * older workers did); nothing this release does adds to it. Kept for one release.
 */
export const LEGACY_QUEUE_NAME = "jobs";

/** Keep a day (at most 1000) of completed jobs for inspection, and failed ones with their error for a month. */
const KEEP_COMPLETED = { age: 86_400, count: 1000 };
const KEEP_FAILED = { age: 30 * 86_400, count: 10_000 };

/** The longest a producer's command (an add, the metrics' counts) waits for Redis to answer. */
export const PRODUCER_COMMAND_TIMEOUT_MS = 2_000;

// Workers need maxRetriesPerRequest null: their blocking commands must wait out Redis hiccups.
// The producer fails fast instead: an outbox pass holds its claimed rows (and a shutdown waits
// for the pass) while a command is out, and the rows are simply dispatched on a later pass. A
// refused connection fails after two reconnection attempts; a hung Redis (accepts, never
// answers, the socket still "ready") or an unreachable host only by the command timeout.
const connect = (url: string) => new Redis(url, { maxRetriesPerRequest: null });
const connectProducer = (url: string) => new Redis(url, { maxRetriesPerRequest: 2, commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS });

/**
 * The producer side, used by every process that dispatches the outbox. The outbox row's id
 * is the job id, so a row handed over twice (a crash between add and commit) is one job.
 * Each job goes to its class's queue with a priority that takes organizations in turns
 * (worker/fair-share.ts); none goes without one, since BullMQ runs jobs without a priority
 * before all prioritized ones.
 */
export class BullQueue implements JobQueue {
  readonly durable = true;
  /** Where each class's jobs go. */
  readonly queues: Record<JobClass, Queue>;
  /** Read for the metrics and by tests; never added to. */
  private readonly legacy: Queue;
  private readonly connection: Redis;
  private readonly fairness: FairnessCounters;

  /** For readiness: the queues' Redis answers. */
  ping(): Promise<unknown> {
    return this.connection.ping();
  }

  constructor(config: QueueConfig) {
    const url = queueUrl(config);
    if (!url) throw new Error("BullQueue needs REDIS_URL");
    this.connection = connectProducer(url);
    const open = (name: string) => {
      const queue = new Queue(name, {
        connection: this.connection,
        prefix: config.redisPrefix,
        defaultJobOptions: {
          attempts: config.worker.attempts,
          backoff: { type: "exponential", delay: config.worker.backoffMs },
          removeOnComplete: KEEP_COMPLETED,
          removeOnFail: KEEP_FAILED,
        },
      });
      // While Redis is away every reconnection attempt is an "error" event; unheard, each one
      // printed a stack trace to stderr. The outage is logged once by app/redis.ts, and the
      // outbox logs the dispatches it has to retry.
      queue.on("error", () => {});
      return queue;
    };
    this.queues = { cpu: open(queueName("cpu")), io: open(queueName("io")) };
    this.legacy = open(LEGACY_QUEUE_NAME);
    this.fairness = new FairnessCounters(this.connection, config.redisPrefix);
  }

  private all(): Queue[] {
    return [...JOB_CLASSES.map((c) => this.queues[c]), this.legacy];
  }

  /** The queue a job of this kind goes to. */
  queueFor(name: JobName): Queue {
    return this.queues[jobClassOf(name)];
  }

  async add(job: QueuedJob): Promise<void> {
    const jobClass = jobClassOf(job.name);
    const org = orgOf(job.data);
    const outstanding = await this.fairness.queued(jobClass, org);
    try {
      await this.queues[jobClass].add(job.name, job.data, { jobId: job.id, priority: fairPriority(outstanding) });
    } catch (err) {
      await this.fairness.settled(jobClass, org).catch(() => {});
      throw err;
    }
  }

  /** A job by id, in whichever queue holds it (tests, inspection). */
  async getJob(id: string): Promise<Job | undefined> {
    for (const queue of this.all()) {
      const job = await queue.getJob(id);
      if (job) return job;
    }
    return undefined;
  }

  /** The queues' jobs by state, all classes together (metrics); failed ones are those BullMQ keeps (30 days). */
  async counts(): Promise<Record<string, number>> {
    const out = { waiting: 0, active: 0, delayed: 0, failed: 0 };
    // Side by side: a Redis that does not answer costs a scrape one command timeout, not one per queue.
    for (const counts of await Promise.all(this.all().map((q) => q.getJobCounts("waiting", "active", "delayed", "prioritized", "failed")))) {
      out.waiting += (counts.waiting ?? 0) + (counts.prioritized ?? 0);
      out.active += counts.active ?? 0;
      out.delayed += counts.delayed ?? 0;
      out.failed += counts.failed ?? 0;
    }
    return out;
  }

  /** Deletes every queue and its jobs (tests and benchmarks). */
  async obliterate(): Promise<void> {
    for (const queue of this.all()) await queue.obliterate({ force: true });
  }

  async close(): Promise<void> {
    const wait = (await answers(this.connection)) ? IDLE_CLOSE_WAIT_MS : 0;
    await settleWithin(Promise.all(this.all().map((q) => q.close())), wait);
    this.connection.disconnect();
  }
}

export interface BullWorker {
  /** One per class, and the legacy queue's. */
  workers: Worker[];
  /** Finishes the jobs in hand (BullMQ waits for them), then disconnects. */
  close(): Promise<void>;
}

/**
 * Runs the processors on the BullMQ queues: each class's at its own concurrency, and the
 * legacy queue's. Any number of these, in any number of processes
 * and machines, share the work. A job whose worker dies is moved back to waiting once its
 * lock expires (lockMs) by whichever worker checks next (stalledIntervalMs); a job that
 * kills its worker twice is failed and its handler told (`abandoned`).
 */
export function startBullWorker(
  config: QueueConfig,
  processors: Processors,
  log: Logger,
): BullWorker {
  const url = queueUrl(config);
  if (!url) throw new Error("the BullMQ worker needs REDIS_URL");
  const connection = connect(url);
  const fairness = new FairnessCounters(connection, config.redisPrefix);
  const thrownByRun = new WeakSet<Error>();
  const toQueued = (job: Job): QueuedJob => ({ id: job.id!, name: job.name as JobName, data: job.data });
  let inHand = 0;
  let idle: Array<() => void> = [];
  const allDone = () => (inHand === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve)));

  const runJob = async (job: Job) => {
    const handler = processors[job.name as JobName];
    if (!handler) throw new UnrecoverableError(`no processor for ${job.name}`);
    inHand++;
    try {
      await handler.run(toQueued(job), { attempt: job.attemptsMade + 1, attempts: job.opts.attempts ?? 1 });
    } catch (err) {
      // BullMQ does not retry an UnrecoverableError, whatever the attempts left.
      const thrown = err instanceof PermanentJobFailure ? new UnrecoverableError(err.message) : err;
      if (thrown instanceof Error) thrownByRun.add(thrown);
      throw thrown;
    } finally {
      inHand--;
      if (inHand === 0) {
        for (const resolve of idle) resolve();
        idle = [];
      }
    }
  };

  /** Counts a finished job out of its organization's outstanding ones; a miss costs fairness only (fair-share.ts). */
  const settled = (jobClass: JobClass, job: Job) =>
    void fairness.settled(jobClass, orgOf(job.data)).catch((err) => log.debug("counting a finished job out failed", { id: job.id, error: String(err) }));

  /** `jobClass` null: the legacy queue, whose jobs were never counted in. */
  const start = (name: string, concurrency: number, jobClass: JobClass | null) => {
    const worker = new Worker(name, runJob, {
      connection,
      prefix: config.redisPrefix,
      concurrency,
      lockDuration: config.worker.lockMs,
      stalledInterval: config.worker.stalledIntervalMs,
      maxStalledCount: 1,
    });
    worker.on("completed", (job) => {
      if (jobClass) settled(jobClass, job);
    });
    worker.on("failed", (job, err) => {
      if (!job) return;
      // finishedOn is set when BullMQ failed the job for good, not when it will run again.
      if (jobClass && job.finishedOn) settled(jobClass, job);
      const attempts = job.opts.attempts ?? 1;
      const fields = { job: job.name, id: job.id, attempt: job.attemptsMade, error: err.message };
      if (thrownByRun.has(err) && err instanceof UnrecoverableError) return log.warn("job failed for good (running it again would fail the same way)", fields);
      if (thrownByRun.has(err) && job.attemptsMade < attempts) return log.warn("job failed; retrying", fields);
      log.warn("job failed", fields);
      // The handler recorded its own last failure; anything else (stalled too often) it must hear about.
      if (!thrownByRun.has(err)) {
        processors[job.name as JobName]?.abandoned?.(toQueued(job), err.message).catch((e) => log.warn("recording an abandoned job failed", { id: job.id, error: String(e) }));
      }
    });
    worker.on("stalled", (id) => log.warn("job stalled (its worker stopped); running it again", { id }));
    worker.on("error", (err) => log.warn("queue worker error", { error: String(err) }));
    return worker;
  };
  const slots: Record<JobClass, number> = { cpu: cpuJobsInHand(config.worker.concurrency), io: config.worker.ioConcurrency };
  const workers = [...JOB_CLASSES.map((c) => start(queueName(c), slots[c], c)), start(LEGACY_QUEUE_NAME, config.worker.concurrency, null)];

  return {
    workers,
    close: async () => {
      // Stops taking jobs and lets the ones in hand finish (up to CLOSE_WAIT_MS; the shutdown
      // deadline may come first). Then BullMQ records them, but only if Redis answers now: a
      // lost or hung Redis (a partition keeps the socket "ready" while nothing answers) would
      // make its close wait forever (2026 attack run: alive 90 s after SIGTERM). A finished job whose
      // completion could not be recorded runs again once its lock lapses; processors are
      // idempotent.
      const closing = Promise.all(workers.map((w) => w.close()));
      await settleWithin(allDone(), CLOSE_WAIT_MS);
      const alive = await answers(connection);
      if (!(await settleWithin(closing, alive ? IDLE_CLOSE_WAIT_MS : 0))) for (const w of workers) void w.close(true).catch(() => {});
      connection.disconnect();
    },
  };
}

/** A job in hand may run this long into a shutdown; BullMQ's own close waits forever for a lost Redis. */
const CLOSE_WAIT_MS = 30_000;
const IDLE_CLOSE_WAIT_MS = 2_000;

/** True when Redis answers a PING on `connection` within `ms`; `status` alone says "ready" on a hung server. */
async function answers(connection: Redis, ms = 500): Promise<boolean> {
  if (connection.status !== "ready") return false;
  const ping = connection.ping().then(
    () => true,
    () => false,
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([ping, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** True when `p` settled within `ms`. */
async function settleWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const done = p.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([done, expired]);
  } finally {
    clearTimeout(timer);
  }
}
