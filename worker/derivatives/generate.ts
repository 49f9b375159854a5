import { createHash } from "node:crypto";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { derivatives } from "../../db/schema/index.ts";
import type { WorkerConfig } from "../../domain/core/config.ts";
import type { Deps } from "../../domain/core/deps.ts";
import {
  beginDerivativeRun,
  derivativeKey,
  liveObject,
  type Recorded,
  recordOutcome,
  recordRendered,
  THUMBNAIL,
  unsupportedKind,
} from "../../domain/derivatives/derivatives.ts";
import type { MediaKind } from "../../domain/media/kind.ts";
import { hasPicture } from "../../domain/media/picture-facts.ts";
import type { MediaRow } from "../../domain/media/view.ts";
import { isLastAttempt, type JobRun } from "../../domain/ports/queue.ts";
import { objectPath } from "../../domain/media/storage-keys.ts";
import { MediaError, Unsupported } from "./errors.ts";
import type { RenderContext, Rendered } from "./kinds.ts";
import { phashOf } from "./phash.ts";
import { placeholderOf } from "./placeholder.ts";
import { nicedHost } from "./render-pool.ts";
import type { CpuSlots } from "../cpu-slots.ts";
import { RENDERERS } from "./renderers.ts";
import { downloadTo, readSmall, renderSource, withTempDir } from "./source.ts";

/**
 * The `derivatives.generate` job: the thumbnail (image, video poster, PDF first page, audio
 * waveform) of the object's current version, plus what was learned about the file into
 * `info`. Idempotent: the same bytes give the same thumbnail at the same key. A failing
 * attempt leaves the reason on the pending row; the last one records `failed`. Only the
 * decoding takes one of the process's `cpu` slots: the object's read, the download, the
 * thumbnail's write and the record overlap other jobs' decoding.
 */
export async function generateDerivatives(deps: Deps, objectId: string, run: JobRun, cpu: CpuSlots): Promise<void> {
  const object = await beginDerivativeRun(deps, objectId);
  if (!object) return;
  try {
    const { rendered, facts, sha256 } = await render(deps, object, cpu);
    await store(deps, object, rendered, facts, sha256);
  } catch (err) {
    if (err instanceof Unsupported) {
      await cleanUp(deps, await recordOutcome(deps, object, { state: "unsupported", reason: err.message }));
      return;
    }
    const reason = err instanceof MediaError ? err.message : "Internal error while generating the thumbnail";
    if (!(err instanceof MediaError)) deps.log.error("derivative generation crashed", { objectId, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    const state = isLastAttempt(run) ? "failed" : "pending";
    await cleanUp(deps, await recordOutcome(deps, object, { state, reason }));
    throw err;
  }
}

interface Decoded {
  rendered: Rendered;
  /** What `info` learns from the thumbnail (thumbnailFacts). */
  facts: Record<string, unknown>;
}

async function render(deps: Deps, object: MediaRow, cpu: CpuSlots): Promise<Decoded & { sha256: string }> {
  const renderer = RENDERERS[object.kind];
  if (!renderer) throw new Unsupported(unsupportedKind(object.kind));
  const w = deps.config.worker;
  if (object.size > w.maxInputBytes) throw new Unsupported(`Files larger than ${formatBytes(w.maxInputBytes)} get no thumbnail`);
  const key = objectPath(object.bucketId, object.key);
  const base = renderBase(w, object.contentType);
  const run = (ctx: RenderContext): Promise<Decoded> =>
    cpu.run(async () => {
      const rendered = await renderKind(w, object.kind, ctx);
      return { rendered, facts: await thumbnailFacts(object.kind, rendered.thumbnail.bytes) };
    });
  // Most images are a few megabytes: a temporary file would cost more than the bytes in memory.
  if (renderer.inMemory && object.size <= IN_MEMORY_BYTES) {
    // The embedded store's own file of this version: the render reads it where it runs, and the
    // bytes are neither copied here nor sent to the picture process (bench/thumbs.ts: the copy
    // into that message was the largest single cost of the worker's own thread).
    const local = await deps.storage.localFile?.(key);
    if (local && sameVersion(local.info, object.etag) && local.info.size <= IN_MEMORY_BYTES) {
      const decoded = await run({ ...base, file: "", dir: "", stored: { path: local.path, size: local.info.size } });
      return { ...decoded, sha256: decoded.rendered.sha256! };
    }
    const { bytes, sha256 } = await readSmall(deps.storage, key, { etag: object.etag, maxBytes: IN_MEMORY_BYTES });
    return { ...(await run({ ...base, file: "", bytes, dir: "" })), sha256 };
  }
  return withTempDir(async (dir) => {
    const file = join(dir, "source");
    const { sha256 } = await downloadTo(deps.storage, key, file, { etag: object.etag, maxBytes: w.maxInputBytes });
    return { ...(await run({ ...base, file, dir })), sha256 };
  });
}

/** What every render of an object of `contentType` is given besides its bytes. */
export function renderBase(w: WorkerConfig, contentType: string): Pick<RenderContext, "contentType" | "limits" | "timeoutMs"> {
  return { contentType, limits: { maxPixels: w.maxPixels }, timeoutMs: w.toolTimeoutMs };
}

/**
 * The thumbnail and facts of an object of `kind`, rendered where the worker renders: decoding is
 * the CPU-heavy part, so at WORKER_NICE > 0 it runs in the lower-priority host process, else
 * here. The thumbs bench's bare loop calls this too, so both sides render the same way.
 */
export async function renderKind(w: WorkerConfig, kind: MediaKind, ctx: RenderContext): Promise<Rendered> {
  const renderer = RENDERERS[kind];
  if (!renderer) throw new Unsupported(unsupportedKind(kind));
  if (w.nice > 0) return nicedHost({ nice: w.nice, idle: w.schedIdle }, w.toolTimeoutMs).derive(kind, ctx);
  return renderSource(renderer, ctx);
}

/** What `info` learns from the thumbnail: the placeholder, and for pictures the hash that finds near-duplicates (media_similar). */
export async function thumbnailFacts(kind: MediaKind, thumbnail: Buffer): Promise<Record<string, unknown>> {
  const [placeholder, phash] = await Promise.all([placeholderOf(thumbnail), hasPicture(kind) ? phashOf(thumbnail) : undefined]);
  return phash === undefined ? { placeholder } : { placeholder, phash };
}

/** The object the job is for, as the store holds it now (a job without an ETag takes what is there, as readSmall does). */
const sameVersion = (info: { etag: string | null }, etag: string | null) => !etag || !info.etag || info.etag === etag;

/** Objects up to this size reach in-memory renderers (sharp) without a temporary file. */
const IN_MEMORY_BYTES = 32 * 1024 * 1024;

async function store(deps: Deps, object: MediaRow, rendered: Rendered, facts: Record<string, unknown>, sha256: string): Promise<void> {
  const made = [{ variant: THUMBNAIL, ...rendered.thumbnail }];
  const variants = made.map((v) => ({ variant: v.variant, bytes: v.bytes, contentType: v.contentType, width: v.width, height: v.height, etag: hashOf(v.bytes) }));
  await Promise.all(variants.map((v) => deps.storage.put(derivativeKey({ ...v, bucketId: object.bucketId, objectId: object.id }), v.bytes, { contentType: v.contentType })));
  const info: Record<string, unknown> = { ...rendered.info, sha256, ...facts };
  const recorded = await recordRendered(deps, object, variants, info);
  if (!recorded.recorded) deps.log.debug("object changed while its thumbnail was made; result dropped", { objectId: object.id });
  await cleanUp(deps, recorded);
}

/** Bytes no row points at any more; a failed delete only leaves garbage the purge removes. */
async function cleanUp(deps: Deps, recorded: Recorded): Promise<void> {
  for (const key of recorded.unreferencedKeys) {
    await deps.storage.delete(key).catch((err) => deps.log.warn("deleting a replaced derivative failed", { key, error: String(err) }));
  }
}

/** BullMQ gave up on the job (its worker died in it twice): say so rather than stay pending forever. */
export async function abandonDerivatives(deps: Deps, objectId: string, reason: string): Promise<void> {
  const [row] = await deps.db.select().from(derivatives).where(and(eq(derivatives.objectId, objectId), eq(derivatives.variant, THUMBNAIL)));
  if (row?.state !== "pending") return;
  const object = await liveObject(deps, objectId);
  if (!object) return;
  deps.log.warn("derivative job abandoned", { objectId, reason });
  await cleanUp(deps, await recordOutcome(deps, object, { state: "failed", reason: "The worker stopped while processing this file, more than once; it may be too large or malformed" }));
}

const hashOf = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex").slice(0, 32);

function formatBytes(n: number): string {
  for (const [unit, size] of [["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]] as const) if (n >= size) return `${Math.round((n / size) * 10) / 10} ${unit}`;
  return `${n} bytes`;
}
