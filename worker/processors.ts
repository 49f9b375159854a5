import type { Deps } from "../domain/core/deps.ts";
import { jobClassOf, type JobName, type JobPayloads } from "../domain/core/jobs.ts";
import { purgeObject } from "../domain/media/media.ts";
import type { JobRun, Processors } from "../domain/ports/queue.ts";
import { bucketDerivativesPrefix, bucketPrefix } from "../domain/media/storage-keys.ts";
import { abandonDerivatives, generateDerivatives } from "./derivatives/generate.ts";
import { abandonSetVariants, generateSetVariants } from "./set-variants.ts";
import { deliverWebhook } from "../domain/events/delivery.ts";
import { webhookSender } from "./webhook-sender.ts";
import { runImport } from "../domain/media/imports.ts";
import { syncSearch } from "./search-sync.ts";
import { extractText } from "./text-extract.ts";
import { backfillTextBatch } from "../domain/search/text.ts";
import { urlFetcher } from "./url-fetcher.ts";
import { pictureBackfillBatch } from "../domain/media/picture-backfill.ts";
import { readPicture } from "./derivatives/phash.ts";
import { CpuSlots } from "./cpu-slots.ts";

interface Handler<N extends JobName> {
  run(deps: Deps, data: JobPayloads[N], run: JobRun, cpu: CpuSlots): Promise<void>;
  /** A `cpu` job that takes the process's decoding slots itself, around its decoding only; every other `cpu` job holds one for its whole run. */
  slotsOwnDecoding?: true;
  abandoned?(deps: Deps, data: JobPayloads[N], reason: string): Promise<void>;
}
type Handlers = { [N in JobName]?: Handler<N> };

/**
 * What each job does. The same table serves the in-process queue and the BullMQ worker.
 * Every processor is idempotent: running a job twice gives the result of running it once.
 */
const handlers: Handlers = {
  "derivatives.generate": {
    run: (deps, { objectId }, run, cpu) => generateDerivatives(deps, objectId, run, cpu),
    slotsOwnDecoding: true,
    abandoned: (deps, { objectId }, reason) => abandonDerivatives(deps, objectId, reason),
  },
  "media.purge": { run: (deps, { objectId }) => purgeObject(deps, objectId) },
  "sets.generate": {
    run: (deps, { orgId, setId }, run) => generateSetVariants(deps, orgId, setId, run),
    abandoned: (deps, { orgId, setId }, reason) => abandonSetVariants(deps, orgId, setId, reason),
  },
  "search.sync": { run: (deps, { objectIds }) => syncSearch(deps, objectIds) },
  "media.text": { run: (deps, { objectId }) => extractText(deps, objectId) },
  "search.backfill": { run: async (deps, data) => void (await backfillTextBatch(deps, data)) },
  "media.pictures": { run: async (deps, { orgId }) => void (await pictureBackfillBatch(deps, orgId, readPicture)) },
  // Never throws for a receiver's failure: each attempt records itself and schedules the next.
  "webhooks.deliver": { run: (deps, data) => deliverWebhook(deps, webhookSender(deps.config.webhooks), data) },
  // Never throws for the remote side's failure (recorded on the import); ours are retried.
  "media.import": { run: (deps, { importId }, run) => runImport(deps, urlFetcher(deps.config.imports), importId, run) },
  "buckets.purge": {
    run: async (deps, { bucketId }) => {
      await deps.storage.deletePrefix(bucketPrefix(bucketId));
      await deps.storage.deletePrefix(bucketDerivativesPrefix(bucketId));
    },
  },
};

/** One set of decoding slots per process: every queue it runs (both classes', the legacy one) shares them. */
export function processorsFor(deps: Deps): Processors {
  const cpu = new CpuSlots(deps.config.worker.concurrency);
  const out: Processors = {};
  for (const name of Object.keys(handlers) as JobName[]) {
    const h = handlers[name] as Handler<JobName>;
    const whole = jobClassOf(name) === "cpu" && !h.slotsOwnDecoding;
    out[name] = {
      run: (job, run) => (whole ? cpu.run(() => h.run(deps, job.data, run, cpu)) : h.run(deps, job.data, run, cpu)),
      ...(h.abandoned ? { abandoned: (job, reason) => h.abandoned!(deps, job.data, reason) } : {}),
    };
  }
  return out;
}
