import { and, eq, inArray, isNull, ne, sql } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";
import type { DerivativeState, Thumbnail } from "../../contract/media.ts";
import { derivatives, mediaObjects } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { AppError } from "../core/errors.ts";
import { resolveLiveObject } from "../media/object-refs.ts";
import type { MediaKind } from "../media/kind.ts";
import type { ObjectRestored, ObjectStored } from "../media/lifecycle.ts";
import { enqueueJob } from "../core/jobs.ts";
import { derivativePrefix } from "../media/storage-keys.ts";
import { emitEvent, eventCtes } from "../events/emit.ts";
import { pictureFacts } from "../media/picture-facts.ts";
import { executeKept, prepared } from "../core/prepared.ts";

/** The variant GET /api/media/{id}/thumbnail serves: a WebP whose long edge is at most THUMBNAIL_EDGE. */
export const THUMBNAIL = "thumbnail" as const;
export const THUMBNAIL_EDGE = 320;
/**
 * The variant on-the-fly renders of a video or PDF are cut from: its poster frame or first
 * page at up to 1280 px (an image is rendered from its own bytes).
 */
export const RENDER_SOURCE = "source" as const;

/** Kinds the worker can draw a picture of; 3d and other files get no thumbnail. */
const RENDERABLE: ReadonlySet<MediaKind> = new Set(["image", "video", "audio", "pdf"]);
export const hasRenderer = (kind: MediaKind) => RENDERABLE.has(kind);

export type DerivativeRow = typeof derivatives.$inferSelect;

const EXTENSIONS: Record<string, string> = { "image/webp": "webp", "image/png": "png", "image/jpeg": "jpg" };

/**
 * Where a derivative's bytes live: under the object's derivative prefix, named by a hash of
 * the bytes. Different bytes never share a key, so a slow job for an old version can never
 * overwrite what a newer one wrote, and regenerating identical bytes writes the same key.
 */
export function derivativeKey(d: { bucketId: string; objectId: string; variant: string; etag: string; contentType: string }): string {
  return `${derivativePrefix(d.bucketId, d.objectId)}${d.variant}-${d.etag}.${EXTENSIONS[d.contentType] ?? "bin"}`;
}

/**
 * Called in confirm's transaction, so a thumbnail request right after confirm says
 * "pending" (not "unavailable", not the previous version's picture). The previous
 * version's storage key stays on the row: the job deletes those bytes once it replaces them.
 */
/**
 * A recorded object gets its thumbnail planned and the job that makes it enqueued (none for a
 * new file no renderer draws: see reportUnrenderable).
 */
export async function planDerivatives(e: ObjectStored): Promise<void> {
  await markThumbnailPending(e.tx, e.object, e.at);
  if (settledAtConfirm(e)) return;
  await enqueueJob(e.tx, "derivatives.generate", { orgId: e.orgId, objectId: e.object.id });
}

/**
 * A new object of a kind no renderer draws (3d, other files) is settled in its confirm's own
 * transaction: its thumbnail row says unsupported (planDerivatives) and derivative.failed is
 * told here, after media.created, as the job would have told it. The job would only have
 * written the same row again, so none is queued: it was about a fifth of the server's CPU per
 * confirm of such a file (bench/notes/2026-11-27-confirm.md). New bytes at an existing object's
 * key still get the job: it deletes the earlier version's derivatives after its commit.
 */
export async function reportUnrenderable(e: ObjectStored): Promise<void> {
  if (!settledAtConfirm(e)) return;
  await emitEvent(e.tx, {
    orgId: e.orgId,
    type: "derivative.failed",
    at: e.at,
    data: { objectId: e.object.id, bucketId: e.bucketId, state: "unsupported", reason: unsupportedKind(e.object.kind) },
  });
}

const settledAtConfirm = (e: ObjectStored) => e.previous === null && !hasRenderer(e.object.kind);

/**
 * A restored object keeps the derivatives it had; one deleted before its thumbnail was made
 * (the job skips deleted objects) gets the job again.
 */
export async function resumeDerivatives(e: ObjectRestored): Promise<void> {
  const [row] = await e.tx
    .select({ state: derivatives.state })
    .from(derivatives)
    .where(and(eq(derivatives.objectId, e.object.id), eq(derivatives.variant, THUMBNAIL)));
  if (row && row.state !== "pending") return;
  if (!row) await markThumbnailPending(e.tx, e.object, e.at);
  await enqueueJob(e.tx, "derivatives.generate", { orgId: e.orgId, objectId: e.object.id });
}

export async function markThumbnailPending(tx: Db, object: { id: string; kind: MediaKind; etag: string | null }, now: Date): Promise<void> {
  const renderable = hasRenderer(object.kind);
  const fields = {
    state: (renderable ? "pending" : "unsupported") as DerivativeState,
    sourceEtag: object.etag,
    error: renderable ? null : unsupportedKind(object.kind),
    contentType: null,
    size: null,
    width: null,
    height: null,
    etag: null,
    attempts: 0,
    updatedAt: now,
  };
  await tx
    .insert(derivatives)
    .values({ objectId: object.id, variant: THUMBNAIL, ...fields })
    .onConflictDoUpdate({ target: [derivatives.objectId, derivatives.variant], set: fields });
}

export const unsupportedKind = (kind: MediaKind) => `No thumbnail is made for ${kind === "other" ? "this type of file" : `${kind} files`}`;

/**
 * The thumbnail of a live object of the caller's organization. 404 with its own code while it
 * is being made (`thumbnail_pending`) and when there is none (`thumbnail_unavailable`, with
 * the reason).
 */
export async function getThumbnail(deps: Deps, caller: Caller, objectId: string): Promise<Thumbnail> {
  const object = await resolveLiveObject(deps.db, caller, objectId);
  const [row] = await deps.db
    .select()
    .from(derivatives)
    .where(and(eq(derivatives.objectId, object.id), eq(derivatives.variant, THUMBNAIL)));
  if (!row) throw new AppError("thumbnail_unavailable", "This object has no thumbnail", { state: null });
  if (row.state === "pending") {
    const details = { state: "pending", attempts: row.attempts, ...(row.error ? { lastError: row.error } : {}) };
    throw new AppError("thumbnail_pending", "The thumbnail is being generated; try again in a few seconds", details);
  }
  if (row.state !== "ready" || !row.etag || !row.contentType) {
    throw new AppError("thumbnail_unavailable", row.error ?? "This object has no thumbnail", { state: row.state, reason: row.error });
  }
  return thumbnailOf({ id: object.id, bucketId: object.bucketId }, { ...row, etag: row.etag, contentType: row.contentType });
}

/** A ready thumbnail row of an object, as the API describes it. */
export function thumbnailOf(
  object: { id: string; bucketId: string },
  row: Pick<typeof derivatives.$inferSelect, "width" | "height" | "size" | "updatedAt"> & { etag: string; contentType: string },
): Thumbnail {
  return {
    objectId: object.id,
    bucketId: object.bucketId,
    variant: THUMBNAIL,
    contentType: row.contentType,
    width: row.width ?? 0,
    height: row.height ?? 0,
    size: row.size ?? 0,
    etag: row.etag,
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The thumbnail's bytes; a regeneration that replaced them since `getThumbnail` reads as pending. */
export async function readThumbnail(deps: Deps, file: Thumbnail): Promise<ReadableStream<Uint8Array>> {
  const got = await deps.storage.get(derivativeKey(file));
  if (!got) throw new AppError("thumbnail_pending", "The thumbnail was just replaced; try again", { state: "pending" });
  return got.body;
}

// ---- The worker's side: every write checks that the object is still the version the job read.

/** The live object a derivative job is about; null when it was deleted or purged meanwhile. */
export async function liveObject(deps: Deps, objectId: string): Promise<typeof mediaObjects.$inferSelect | null> {
  const [row] = await deps.db.select().from(mediaObjects).where(and(eq(mediaObjects.id, objectId), isNull(mediaObjects.deletedAt)));
  return row ?? null;
}

/**
 * The object a derivatives job works on, as it is now; null when it was deleted meanwhile
 * (nothing to do). An object confirmed before derivatives existed gets its pending row here.
 */
export async function beginDerivativeRun(deps: Deps, objectId: string): Promise<typeof mediaObjects.$inferSelect | null> {
  // Prepared (see prepared.ts), as is recordRendered's statement: both run once per thumbnail.
  const [found] = await prepared(deps.db, "derivative_run_begin", (d) =>
    d
      .select({ object: mediaObjects, planned: derivatives.id })
      .from(mediaObjects)
      .leftJoin(derivatives, and(eq(derivatives.objectId, mediaObjects.id), eq(derivatives.variant, THUMBNAIL)))
      .where(and(eq(mediaObjects.id, sql.placeholder("id")), isNull(mediaObjects.deletedAt)))
      .prepare("derivative_run_begin"),
  ).execute({ id: objectId });
  if (!found) return null;
  if (!found.planned) {
    // Confirm writes this row in its own transaction; only objects older than that lack it.
    await deps.db
      .insert(derivatives)
      .values({ objectId, variant: THUMBNAIL, state: "pending", sourceEtag: found.object.etag, updatedAt: deps.clock.now() })
      .onConflictDoNothing();
  }
  return found.object;
}

export interface RenderedVariant {
  variant: string;
  bytes: Uint8Array;
  contentType: string;
  width: number;
  height: number;
  /** Hash of the bytes. */
  etag: string;
}

/** Storage keys the caller deletes after the commit: bytes no row points at any more. */
export interface Recorded {
  recorded: boolean;
  unreferencedKeys: string[];
}

/** Locks the object; false when it was deleted or overwritten since the job read it. */
async function stillCurrent(tx: Db, object: typeof mediaObjects.$inferSelect): Promise<boolean> {
  const [now] = await tx
    .select({ etag: mediaObjects.etag, deletedAt: mediaObjects.deletedAt })
    .from(mediaObjects)
    .where(eq(mediaObjects.id, object.id))
    .for("update");
  return !!now && now.deletedAt === null && now.etag === object.etag;
}

/**
 * Records what the job made for `object` (the version it read) and the facts it extracted
 * into `info`, counting the attempt. A job for a version that was overwritten or deleted
 * meanwhile records nothing: its bytes are returned for deletion instead.
 *
 * One statement: it runs once per thumbnail, and on the embedded database every round trip
 * costs CPU the thumbnails need (bench/notes/2026-11-22-thumbnails.md). The object row is locked first, so a
 * confirm of a newer version waits for it or wins, never interleaves. It is kept prepared
 * (executeKept): its text has one shape per number of variants, and every value in it is a key
 * or a value written, so no plan depends on them; parsing and planning it per call was most
 * of its cost on the embedded database.
 */
export async function recordRendered(deps: Deps, object: typeof mediaObjects.$inferSelect, variants: RenderedVariant[], info: Record<string, unknown>): Promise<Recorded> {
  const f = indexedFacts(info);
  const pic = pictureFacts(object.kind, info);
  const keys = variants.map((v) => derivativeKey({ ...v, bucketId: object.bucketId, objectId: object.id }));
  const made = sql.join(variants.map((v) => sql`${v.variant}`), sql`, `);
  const rows = sql.join(
    variants.map((v, i) => sql`(${v.variant}, ${keys[i]}, ${v.contentType}, ${v.bytes.byteLength}::bigint, ${v.width}::int, ${v.height}::int, ${v.etag})`),
    sql`, `,
  );
  const result = await executeKept(deps.db, sql`
    with target as (
      select id from media_objects
      where id = ${object.id} and deleted_at is null and etag is not distinct from ${object.etag}::text
      for update
    ),
    previous as (
      select variant, storage_key from derivatives where object_id = ${object.id}
    ),
    upserted as (
      insert into derivatives (object_id, variant, state, source_etag, storage_key, content_type, size, width, height, etag, error, attempts, updated_at)
      select t.id, v.variant, 'ready', ${object.etag}::text, v.storage_key, v.content_type, v.size, v.width, v.height, v.etag, null, 1, ${deps.clock.now().toISOString()}::timestamptz
      from target t, (values ${rows}) as v(variant, storage_key, content_type, size, width, height, etag)
      on conflict (object_id, variant) do update set
        state = 'ready', source_etag = excluded.source_etag, storage_key = excluded.storage_key,
        content_type = excluded.content_type, size = excluded.size, width = excluded.width,
        height = excluded.height, etag = excluded.etag, error = null,
        attempts = derivatives.attempts + 1, updated_at = excluded.updated_at
      returning 1
    ),
    dropped as (
      delete from derivatives where object_id in (select id from target) and variant not in (${made})
      returning 1
    ),
    informed as (
      update media_objects set info = info || ${JSON.stringify(info)}::jsonb where id in (select id from target)
      returning 1
    ),
    facts as (
      insert into object_facts (object_id, org_id, source_etag, sha256, taken_at, width, height, duration, phash, phash0, phash1, phash2, phash3, color_l, color_a, color_b)
      select t.id, ${object.orgId}::uuid, ${object.etag}::text, ${f.sha256}::text, ${f.takenAt}::timestamptz, ${f.width}::int, ${f.height}::int, ${f.duration}::float8,
        ${pic.phash}::bigint, ${pic.segments[0]}::int, ${pic.segments[1]}::int, ${pic.segments[2]}::int, ${pic.segments[3]}::int,
        ${pic.lab?.l ?? null}::real, ${pic.lab?.a ?? null}::real, ${pic.lab?.b ?? null}::real
      from target t
      on conflict (object_id) do update set
        source_etag = excluded.source_etag, sha256 = excluded.sha256, taken_at = excluded.taken_at,
        width = excluded.width, height = excluded.height, duration = excluded.duration,
        phash = excluded.phash, phash0 = excluded.phash0, phash1 = excluded.phash1, phash2 = excluded.phash2, phash3 = excluded.phash3,
        color_l = excluded.color_l, color_a = excluded.color_a, color_b = excluded.color_b
      returning 1
    ),
    ${eventCtes(
      { orgId: object.orgId, type: "derivative.ready", at: deps.clock.now(), data: { objectId: object.id, bucketId: object.bucketId, variants: variants.map((v) => v.variant) } },
      { when: sql`exists (select 1 from target)` },
    )}
    select (select count(*) from target)::int as current,
           (select count(*) from ev_jobs)::int as jobs,
           coalesce((select json_agg(storage_key) from previous where storage_key is not null), '[]'::json) as previous
  `);
  const [row] = rowsOf<{ current: number; jobs: number; previous: string[] | string }>(result);
  const previous: string[] = typeof row?.previous === "string" ? JSON.parse(row.previous) : (row?.previous ?? []);
  if (!row?.current) {
    const inUse = new Set(previous);
    return { recorded: false, unreferencedKeys: keys.filter((k) => !inUse.has(k)) };
  }
  // An external search index carries the dominant colour: its document is written again.
  const synced = deps.search.external && pic.lab;
  if (synced) await enqueueJob(deps.db, "search.sync", { orgId: object.orgId, objectIds: [object.id] });
  // A dispatch pass only when this wrote a job (a webhook delivery, the sync): for most
  // thumbnails it would be a statement that finds nothing, on the worker's time.
  if (synced || Number(row.jobs) > 0) deps.jobs.kick();
  const kept = new Set(keys);
  return { recorded: true, unreferencedKeys: previous.filter((k) => !kept.has(k)) };
}

/** The facts lists filter on, from what the worker put in `info` (object_facts). */
export function indexedFacts(info: Record<string, unknown>): { sha256: string | null; takenAt: string | null; width: number | null; height: number | null; duration: number | null } {
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  const exif = (info.exif ?? {}) as { takenAt?: unknown };
  const taken = typeof exif.takenAt === "string" ? exif.takenAt : typeof info.takenAt === "string" ? info.takenAt : null;
  // A camera's local time without a zone is taken as UTC: ranges are about days, not hours.
  const at = taken ? new Date(/[zZ]|[+-]\d{2}:\d{2}$/.test(taken) ? taken : `${taken}Z`) : null;
  const int = (v: unknown) => (num(v) === null ? null : Math.round(v as number));
  return {
    sha256: typeof info.sha256 === "string" ? info.sha256 : null,
    takenAt: at && !Number.isNaN(at.getTime()) ? at.toISOString() : null,
    width: int(info.width),
    height: int(info.height),
    duration: num(info.duration),
  };
}

/**
 * Records that no derivative exists for this version (failed for good, or unsupported) or,
 * with state pending, why the last attempt failed. A final state drops the rows of every
 * other variant and returns their bytes for deletion. A thumbnail already made for this very
 * version stays: a later run that fails (a duplicate job during a storage outage, a worker
 * without ffmpeg) does not undo it.
 */
export async function recordOutcome(deps: Deps, object: typeof mediaObjects.$inferSelect, outcome: { state: Exclude<DerivativeState, "ready">; reason: string }): Promise<Recorded> {
  const recorded = await recordOutcomeIn(deps, object, outcome);
  if (recorded.recorded && outcome.state !== "pending") deps.jobs.kick();
  return recorded;
}

async function recordOutcomeIn(deps: Deps, object: typeof mediaObjects.$inferSelect, outcome: { state: Exclude<DerivativeState, "ready">; reason: string }): Promise<Recorded> {
  return deps.db.transaction(async (tx) => {
    if (!(await stillCurrent(tx, object))) return { recorded: false, unreferencedKeys: [] };
    const now = deps.clock.now();
    if (outcome.state === "pending") {
      await tx
        .update(derivatives)
        .set({ error: outcome.reason, attempts: sql`${derivatives.attempts} + 1`, updatedAt: now })
        .where(and(eq(derivatives.objectId, object.id), eq(derivatives.variant, THUMBNAIL), ne(derivatives.state, "ready")));
      return { recorded: true, unreferencedKeys: [] };
    }
    const previous = await tx.select().from(derivatives).where(eq(derivatives.objectId, object.id));
    const made = previous.find((r) => r.variant === THUMBNAIL && r.state === "ready" && r.sourceEtag === object.etag);
    if (made) return { recorded: false, unreferencedKeys: [] };
    await tx.delete(derivatives).where(and(eq(derivatives.objectId, object.id), ne(derivatives.variant, THUMBNAIL)));
    const fields = {
      state: outcome.state,
      sourceEtag: object.etag,
      storageKey: null,
      contentType: null,
      size: null,
      width: null,
      height: null,
      etag: null,
      error: outcome.reason,
      updatedAt: now,
    };
    await tx
      .insert(derivatives)
      .values({ objectId: object.id, variant: THUMBNAIL, ...fields, attempts: 1 })
      .onConflictDoUpdate({ target: [derivatives.objectId, derivatives.variant], set: { ...fields, attempts: sql`${derivatives.attempts} + 1` } });
    await emitEvent(tx, {
      orgId: object.orgId,
      type: "derivative.failed",
      at: now,
      data: { objectId: object.id, bucketId: object.bucketId, state: outcome.state, reason: outcome.reason },
    });
    return { recorded: true, unreferencedKeys: previous.flatMap((r) => (r.storageKey ? [r.storageKey] : [])) };
  });
}
