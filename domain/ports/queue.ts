import type { JobName, JobPayloads } from "../core/jobs.ts";

export interface QueuedJob<N extends JobName = JobName> {
  /** Unique per job (the outbox row's id); adding the same id twice yields one job. */
  id: string;
  name: N;
  data: JobPayloads[N];
}

/** Which run of a job this is: processors record a failure as final only on the last one. */
export interface JobRun {
  /** 1 for the first run. */
  attempt: number;
  attempts: number;
}

export const isLastAttempt = (run: JobRun) => run.attempt >= run.attempts;

/**
 * A job failure that running the job again cannot change (the picture cannot be decoded or
 * encoded, the output is over its limit): both queues settle the job as failed at once instead
 * of retrying it (2026 attack run: one 12000² rendition failed deterministically after 4.5 CPU-minutes,
 * and was run three more times). BullMQ gets it as an UnrecoverableError.
 */
export class PermanentJobFailure extends Error {
  override readonly name = "PermanentJobFailure";
}

/** What a queue adapter runs for one kind of job. */
export interface JobHandler {
  run(job: QueuedJob, run: JobRun): Promise<void>;
  /**
   * The queue gave up on the job without `run` having failed for the last time (its worker
   * died in it too often): the handler records the failure that `run` could not.
   */
  abandoned?(job: QueuedJob, reason: string): Promise<void>;
}

export type Processors = Partial<Record<JobName, JobHandler>>;

/** Where jobs go to be run by workers: BullMQ on Redis, or in-process when embedded. */
export interface JobQueue {
  /**
   * True when the queue keeps a job once `add` returned, across restarts (BullMQ): the outbox
   * is done with the row then. False (in-process): the row stays open until the job settles.
   */
  readonly durable: boolean;
  add(job: QueuedJob): Promise<void>;
  close(): Promise<void>;
}
