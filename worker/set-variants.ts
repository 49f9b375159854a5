import { join } from "node:path";
import { and, eq, isNull } from "drizzle-orm";
import { mediaObjects, mediaSets } from "../db/schema/index.ts";
import type { Deps } from "../domain/core/deps.ts";
import { itemsToGenerate, MAX_RENDITION_BYTES, MAX_RENDITION_PIXELS, recordGeneratedItem, recordItemsFailed, renditionKey } from "../domain/collections/sets.ts";
import { isLastAttempt, type JobRun, PermanentJobFailure } from "../domain/ports/queue.ts";
import { objectPath } from "../domain/media/storage-keys.ts";
import { recordStoredObject, reserveUploadQuota } from "../domain/media/uploads.ts";
import { AppError } from "../domain/core/errors.ts";
import { liveUsage } from "../domain/usage/counters.ts";
import { emitEvent } from "../domain/events/emit.ts";
import { MediaError } from "./derivatives/errors.ts";
import { readPdf } from "./derivatives/pdf.ts";
import { type ImageInput, renderCover } from "./derivatives/render.ts";
import { renderCoversNiced } from "./derivatives/niced.ts";
import { downloadTo, withTempDir } from "./derivatives/source.ts";
import { POSTER_EDGE, videoPoster } from "./derivatives/video.ts";

/**
 * The `sets.generate` job: every generated item of the set is rendered from the
 * base object at its width x height (scaled to cover, cropped around what draws the eye),
 * stored as a media object in the base object's bucket and recorded on the item. A video base
 * is rendered from its poster frame, a PDF from its first page. Each item always lands at the
 * same key, so regenerating replaces its rendition and never duplicates it; running the job
 * twice gives the result of running it once.
 */
export async function generateSetVariants(deps: Deps, orgId: string, setId: string, run: JobRun): Promise<void> {
  try {
    await renderSet(deps, orgId, setId);
  } catch (err) {
    // The items this run could not settle are failed once no run is left to make them; a
    // caller waiting on the generation is answered then, not at its timeout.
    if (err instanceof PermanentJobFailure) await recordItemsFailed(deps.db, orgId, setId, err.message, deps.clock.now());
    else if (isLastAttempt(run)) await recordItemsFailed(deps.db, orgId, setId, "The renditions could not be made", deps.clock.now());
    throw err;
  }
}

/** The queue gave up on the job (its worker died in it too often): its unsettled items failed. */
export async function abandonSetVariants(deps: Deps, orgId: string, setId: string, reason: string): Promise<void> {
  await recordItemsFailed(deps.db, orgId, setId, `The renditions could not be made: ${reason}`, deps.clock.now());
}

async function renderSet(deps: Deps, orgId: string, setId: string): Promise<void> {
  const [set] = await deps.db.select().from(mediaSets).where(and(eq(mediaSets.id, setId), eq(mediaSets.orgId, orgId)));
  if (!set) return;
  const [base] = await deps.db
    .select()
    .from(mediaObjects)
    .where(and(eq(mediaObjects.id, set.baseObjectId), eq(mediaObjects.orgId, orgId), isNull(mediaObjects.deletedAt)));
  if (!base) {
    await recordItemsFailed(deps.db, orgId, setId, "The base object was deleted", deps.clock.now());
    return deps.log.info("set base object deleted; nothing rendered", { setId });
  }
  const items = await itemsToGenerate(deps.db, orgId, setId);
  if (items.length === 0) return;
  const w = deps.config.worker;
  if (base.size > w.maxInputBytes) throw new PermanentJobFailure("The base object is too large to render renditions from");
  // Items over the pixel limit (added before it existed) are refused here too: never rendered.
  const oversized = items.filter((i) => i.width * i.height > MAX_RENDITION_PIXELS);
  if (oversized.length) {
    deps.log.warn("set items over the rendition pixel limit; not rendered", { setId, itemIds: oversized.map((i) => i.id), limit: MAX_RENDITION_PIXELS });
    await recordItemsFailed(deps.db, orgId, setId, `Over the rendition limit of ${MAX_RENDITION_PIXELS / 1e6} megapixels`, deps.clock.now(), oversized.map((i) => i.id));
  }
  const renderable = items.filter((i) => !oversized.includes(i));
  if (renderable.length === 0) return;
  // A full allocation stays full however often the job runs: refused before any CPU is spent.
  const usage = await liveUsage(deps.db, orgId);
  if (usage && usage.usedStorage + usage.reservedStorage >= usage.allocatedStorage) throw new PermanentJobFailure(DOES_NOT_FIT);
  deps.log.debug("rendering set renditions", { setId, items: renderable.length });
  const largest = Math.max(...renderable.flatMap((i) => [i.width, i.height]));
  const made: string[] = [];
  await withTempDir(async (dir) => {
    const source = join(dir, "source");
    await downloadTo(deps.storage, objectPath(base.bucketId, base.key), source, { etag: base.etag, maxBytes: w.maxInputBytes });
    const image = await deterministic(() => sourceImage(deps, base.kind, source, largest));
    // WORKER_NICE > 0: every rendition is made in a child process of lower priority first.
    const niced = w.nice > 0 ? await renderCoversNiced(image, renderable, { maxPixels: w.maxPixels, dir, priority: { nice: w.nice, idle: w.schedIdle } }) : null;
    for (const item of renderable) {
      const bytes = niced
        ? await deterministic(async () => {
            const r = niced.get(item.id)!;
            if (r instanceof Error) throw r;
            return r;
          })
        : await deterministic(() => renderCover(image, { width: item.width, height: item.height }, { maxPixels: w.maxPixels, format: "webp" }));
      if (bytes.byteLength > MAX_RENDITION_BYTES) {
        deps.log.warn("set rendition over the size limit; not stored", { setId, itemId: item.id, bytes: bytes.byteLength, limit: MAX_RENDITION_BYTES });
        await recordItemsFailed(deps.db, orgId, setId, `The rendition is over ${MAX_RENDITION_BYTES} bytes`, deps.clock.now(), [item.id]);
        continue;
      }
      const key = renditionKey(base.key, item);
      // Reserved like an upload before a byte is stored: a rendition is the organization's storage
      // too. A refusal is final: the same rendition will not fit on the next run either.
      await reserveUploadQuota(deps, orgId, { bucketId: base.bucketId, key, size: bytes.length, contentType: "image/webp" }).catch((err) => {
        if (err instanceof AppError && err.code === "quota_exceeded") throw new PermanentJobFailure(DOES_NOT_FIT);
        throw err;
      });
      await deps.storage.put(objectPath(base.bucketId, key), bytes, { contentType: "image/webp" });
      const objectId = await recordStoredObject(deps, orgId, base.bucketId, key);
      // An item removed (or given an object) meanwhile keeps what it has; the rendition stays an object.
      if (await recordGeneratedItem(deps.db, orgId, item.id, objectId, deps.clock.now())) made.push(objectId);
      else deps.log.debug("set item changed while rendering", { itemId: item.id });
    }
  });
  // After the last item is recorded; a worker that dies before this runs the job again (idempotent), which sends it then.
  if (await emitEvent(deps.db, { orgId, type: "set.generated", at: deps.clock.now(), data: { setId, baseObjectId: base.id, objectIds: made } })) deps.jobs.kick();
}

const DOES_NOT_FIT = "The renditions do not fit the organization's storage allocation";

/**
 * Decoding the base and encoding a rendition are pure functions of the bytes and the item:
 * when they fail (an undecodable file, "webpsave: unable to encode", a poster that cannot be
 * taken) they fail again on every retry, so the job fails for good at once. Downloads, storage
 * writes and the database stay outside: their failures are retried.
 */
async function deterministic<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw new PermanentJobFailure(err instanceof MediaError ? err.message : `The rendition could not be made: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The picture renditions are cut from: the image itself, a video's poster frame, a PDF's first page. */
async function sourceImage(deps: Deps, kind: string, file: string, largestSide: number): Promise<ImageInput> {
  const w = deps.config.worker;
  // Renditions may be larger than thumbnails: take the frame or page at full size (up to the largest side asked for).
  const edge = Math.max(largestSide, POSTER_EDGE);
  if (kind === "image") return file;
  if (kind === "video") return (await videoPoster(file, { edge, timeoutMs: w.toolTimeoutMs })).poster;
  if (kind === "pdf") {
    const { page } = await readPdf(file, { edge, timeoutMs: w.toolTimeoutMs });
    if (!page) throw new MediaError("The first page could not be rendered");
    return page;
  }
  throw new MediaError(`Renditions cannot be made from ${kind} files`);
}
