import { JOB_CLASSES, type JobClass, jobClassOf } from "../domain/core/jobs.ts";
import type { Logger } from "../domain/ports/log.ts";
import { type JobQueue, PermanentJobFailure, type Processors, type QueuedJob } from "../domain/ports/queue.ts";
import { FairLane, orgOf } from "./fair-share.ts";

export interface FailedJob {
  job: QueuedJob;
  error: string;
  attempts: number;
  failedAt: Date;
}

/**
 * Where the in-process queue reports what became of the jobs it was handed (the outbox:
 * worker/outbox.ts). Nothing in memory survives the process, so the outbox keeps each row
 * open until its job settles.
 */
export interface JobLedger {
  /** Finished (error null) or failed for good. */
  settled(id: string, error: string | null): Promise<void>;
  /** Handed back unstarted (shutdown): the next dispatch pass runs them, here or elsewhere. */
  released(ids: string[]): Promise<void>;
  /** Still held by this process: keeps other instances from taking them over. */
  renewed(ids: string[]): Promise<void>;
}

export interface MemoryQueueOptions {
  /** Jobs of each class run at once (WORKER_CONCURRENCY, WORKER_IO_CONCURRENCY). */
  slots: Record<JobClass, number>;
  attempts: number;
  backoffMs: number;
  /** Claims are renewed at half this interval. */
  lockMs: number;
  ledger?: JobLedger;
}

const KEEP_FAILED = 1000;
/** Ids settled lately are still refused, as BullMQ refuses the id of a job it keeps. */
const REMEMBER_SETTLED = 10_000;

type Ready = { job: QueuedJob; attempt: number };

/** One job class's slots and the jobs waiting for them, taken fairly between organizations. */
class Lane {
  readonly ready = new FairLane<Ready>();
  readonly running = new Set<Promise<void>>();
  constructor(readonly slots: number) {}
}

/**
 * The embedded default: jobs run inside the server process, with the same processors,
 * retries and backoff as the BullMQ worker, and the same job classes, each with slots of its
 * own (a slow import never waits for or holds a thumbnail's slot) shared fairly between
 * organizations (worker/fair-share.ts). Shutdown finishes the jobs
 * in hand and hands the others back to the outbox; a killed process stops renewing its
 * claims, so another dispatch pass (after the lock duration) runs its jobs again.
 */
export class MemoryQueue implements JobQueue {
  readonly durable = false;
  /** Every job this process holds: waiting, running, or waiting for a retry. */
  private readonly held = new Map<string, QueuedJob>();
  private readonly settledIds = new Map<string, string | null>();
  private readonly lanes: Record<JobClass, Lane>;
  private readonly retries = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly renewal: ReturnType<typeof setInterval>;
  private closed = false;
  readonly failed: FailedJob[] = [];

  constructor(
    private readonly processors: Processors,
    private readonly log: Logger,
    private readonly opts: MemoryQueueOptions,
  ) {
    this.lanes = { cpu: new Lane(opts.slots.cpu), io: new Lane(opts.slots.io) };
    this.renewal = setInterval(() => this.renew(), Math.max(500, opts.lockMs / 2));
    this.renewal.unref?.();
  }

  async add(job: QueuedJob): Promise<void> {
    if (this.closed) throw new Error("queue is closed");
    if (this.held.has(job.id)) return;
    if (this.settledIds.has(job.id)) {
      // Handed over again: recording its end must have failed. Record it again, do not rerun.
      await this.opts.ledger?.settled(job.id, this.settledIds.get(job.id)!).catch(() => {});
      return;
    }
    this.held.set(job.id, job);
    this.enqueue({ job, attempt: 1 });
  }

  private enqueue(entry: Ready): void {
    const lane = this.lanes[jobClassOf(entry.job.name)];
    lane.ready.push(orgOf(entry.job.data), entry);
    this.pump(lane);
  }

  private pump(lane: Lane): void {
    while (!this.closed && lane.running.size < lane.slots) {
      const next = lane.ready.take();
      if (!next) return;
      const run = this.run(next.item.job, next.item.attempt).finally(() => {
        lane.running.delete(run);
        lane.ready.done(next.org);
        this.pump(lane);
      });
      lane.running.add(run);
    }
  }

  private inFlight(): Promise<void>[] {
    return JOB_CLASSES.flatMap((c) => [...this.lanes[c].running]);
  }

  private async run(job: QueuedJob, attempt: number): Promise<void> {
    const handler = this.processors[job.name];
    if (!handler) {
      this.log.warn("no processor for job", { job: job.name, id: job.id });
      return this.settle(job.id, `no processor for ${job.name}`);
    }
    try {
      await handler.run(job, { attempt, attempts: this.opts.attempts });
      await this.settle(job.id, null);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      // After close the job stays held, so close() hands it back for the next start to retry.
      if (this.closed) return;
      if (attempt < this.opts.attempts && !(err instanceof PermanentJobFailure)) {
        const delay = this.opts.backoffMs * 2 ** (attempt - 1);
        this.log.warn("job failed; retrying", { job: job.name, id: job.id, attempt, delay, error });
        const timer = setTimeout(() => {
          this.retries.delete(job.id);
          this.enqueue({ job, attempt: attempt + 1 });
        }, delay);
        timer.unref?.();
        this.retries.set(job.id, timer);
      } else {
        this.log.warn(err instanceof PermanentJobFailure ? "job failed for good (running it again would fail the same way)" : "job failed", { job: job.name, id: job.id, attempt, error });
        this.failed.push({ job, error, attempts: attempt, failedAt: new Date() });
        if (this.failed.length > KEEP_FAILED) this.failed.shift();
        await this.settle(job.id, error);
      }
    }
  }

  private async settle(id: string, error: string | null): Promise<void> {
    this.held.delete(id);
    this.settledIds.set(id, error);
    if (this.settledIds.size > REMEMBER_SETTLED) this.settledIds.delete(this.settledIds.keys().next().value!);
    await this.opts.ledger?.settled(id, error).catch((err) => this.log.warn("recording a settled job failed", { id, error: String(err) }));
  }

  private renew(): void {
    if (this.held.size === 0 || !this.opts.ledger) return;
    this.opts.ledger.renewed([...this.held.keys()]).catch((err) => this.log.warn("renewing job claims failed", { error: String(err) }));
  }

  /** What this process holds, by state (metrics). */
  async counts(): Promise<Record<string, number>> {
    const lanes = JOB_CLASSES.map((c) => this.lanes[c]);
    return { waiting: lanes.reduce((n, l) => n + l.ready.size, 0), active: lanes.reduce((n, l) => n + l.running.size, 0), delayed: this.retries.size };
  }

  /** Waits until nothing is queued, running or waiting for a retry (tests, benchmarks). */
  async drain(): Promise<void> {
    while (this.held.size > 0) await Promise.race([...this.inFlight(), Bun.sleep(10)]);
  }

  /** Finishes the jobs in hand and hands every other held job back to the outbox. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewal);
    for (const timer of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
    for (const c of JOB_CLASSES) this.lanes[c].ready.clear();
    await Promise.allSettled(this.inFlight());
    const unfinished = [...this.held.keys()];
    this.held.clear();
    if (unfinished.length > 0) {
      await this.opts.ledger?.released(unfinished).catch((err) => this.log.warn("handing jobs back failed", { error: String(err) }));
      this.log.info("returned unfinished jobs to the outbox", { count: unfinished.length });
    }
  }
}
