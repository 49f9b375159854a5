import { jobOutbox } from "../../db/schema/index.ts";
import type { Db } from "../../db/client.ts";

/**
 * Every kind of background job and its payload. Producers call `enqueueJob` inside their
 * transaction; processors live in worker/.
 */
export interface JobPayloads {
  /** Thumbnails, posters and metadata for a confirmed upload. */
  "derivatives.generate": { orgId: string; objectId: string };
  /** Renditions for the items of a set. */
  "sets.generate": { orgId: string; setId: string; /** Of the renditions asked for (the minute's budget counts them). */ pixels?: number };
  /** Bytes and derivatives of a soft-deleted object past retention. */
  "media.purge": { orgId: string; objectId: string };
  /** Push these objects' current state to an external search index. */
  "search.sync": { orgId: string; objectIds: string[] };
  /** One attempt at sending an event to a webhook endpoint (the first, or a retry). */
  "webhooks.deliver": { orgId: string; deliveryId: string; attempt: number };
  /** Fetch a URL into a bucket (media_import). */
  "media.import": { orgId: string; importId: string };
  /** Read the words inside an object (PDF, text file, OCR of an image) into media_text and its search row. */
  "media.text": { orgId: string; objectId: string };
  /** One batch of a resumable text backfill (domain/search/text.ts); queues the next itself. */
  "search.backfill": { orgId: string; bucketId: string | null; ocr: boolean; kind: string };
  /** One batch of an organization's picture hash and colour backfill (domain/media/picture-backfill.ts); queues the next itself. */
  "media.pictures": { orgId: string };
  /** Every stored byte of a deleted bucket. */
  "buckets.purge": { orgId: string; bucketId: string };
}

export type JobName = keyof JobPayloads;

/**
 * Jobs run in two classes that never share slots (docs/worker.md, "Job classes"): `cpu` work
 * decodes and encodes pictures and wants about a core per slot (WORKER_CONCURRENCY); `io`
 * work mostly waits on another machine (a URL being imported, a webhook endpoint, storage,
 * the search index) and gets many slots (WORKER_IO_CONCURRENCY). A slow remote end then holds
 * an `io` slot, never a thumbnail's.
 */
export type JobClass = "cpu" | "io";
export const JOB_CLASSES = ["cpu", "io"] as const satisfies readonly JobClass[];

export const JOB_CLASS: Record<JobName, JobClass> = {
  "derivatives.generate": "cpu",
  "sets.generate": "cpu",
  "media.import": "io",
  "webhooks.deliver": "io",
  "media.purge": "io",
  "buckets.purge": "io",
  "search.sync": "io",
  // PDF parsing and OCR are decoding work: they share the thumbnails' slots and fairness.
  "media.text": "cpu",
  "search.backfill": "io",
  // Decodes a batch of thumbnails.
  "media.pictures": "cpu",
};

/**
 * `cpu` jobs one process holds at once: twice its decoding slots (WORKER_CONCURRENCY,
 * worker/cpu-slots.ts), so while one job reads its object or records its thumbnail another
 * decodes. At most this many sources wait in memory (each at most 32 MiB; larger ones are
 * streamed to a temporary file), plus WORKER_CONCURRENCY while the queue of a release before the
 * job classes still holds jobs: its worker keeps only that many in hand (worker/bullmq-queue.ts).
 */
export const cpuJobsInHand = (concurrency: number) => 2 * concurrency;

/** A job of a kind this release does not know (queued by a newer one) runs with the cpu class's few slots. */
export const jobClassOf = (name: string): JobClass => JOB_CLASS[name as JobName] ?? "cpu";

/**
 * Where a job's trace context comes from. While tracing is on (app/tracing.ts) it records the
 * hand-over and returns a W3C traceparent, kept in the payload so the job's run, in whatever
 * process, continues the trace of the request that caused it.
 */
export const jobTracing: { handOver(name: JobName): string | null } = { handOver: () => null };

/** Records the job in the caller's transaction; the dispatcher hands it to the queue after commit. */
export async function enqueueJob<N extends JobName>(
  tx: Db,
  name: N,
  payload: JobPayloads[N],
  opts: { runAfter?: Date } = {},
): Promise<string> {
  const traceparent = jobTracing.handOver(name);
  const [row] = await tx
    .insert(jobOutbox)
    .values({ name, payload: traceparent ? { ...payload, traceparent } : payload, ...(opts.runAfter ? { runAfter: opts.runAfter } : {}) })
    .returning({ id: jobOutbox.id });
  return row!.id;
}
