import { and, desc, eq, inArray, isNull, lte, sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import type { MediaObject } from "../../contract/media.ts";
import type { AbortedUpload, CompletedUpload, MultipartUpload, PresignedPart, PresignedUpload } from "../../contract/presign.ts";
import { mediaObjects, uploadReservations } from "../../db/schema/index.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { AppError, errors } from "../core/errors.ts";
import { contentTypeFor, kindOf } from "./kind.ts";
import { loadMediaView } from "./media.ts";
import { objectPath } from "./storage-keys.ts";
import { quotaExceeded, releaseReservation, reserveStorage } from "../usage/counters.ts";
import { runHooks } from "./lifecycle.ts";
import { onObjectStored } from "./object-hooks.ts";

/** A single-shot reservation outlives its URL by this much: a slow PUT may start at the last second. */
const SINGLE_SHOT_GRACE_MS = 60 * 60 * 1000;
/** A multipart upload stays reserved this long after its last part was presigned. */
const MULTIPART_IDLE_MS = 24 * 60 * 60 * 1000;

/** Upload tags travel to storage as one header, the labels URL-encoded and joined with "&". */
export function taggingHeader(tags: string[]): string {
  return tags.map((t) => encodeURIComponent(t)).join("&");
}

export interface UploadTarget {
  bucketId: string;
  key: string;
}

/** Single-shot upload, step 1: check the bucket, reserve the declared size, then sign. */
export async function presignUpload(
  deps: Deps,
  caller: Caller,
  input: UploadTarget & { contentType?: string | undefined; size?: number | undefined; tags?: string[] | undefined },
): Promise<PresignedUpload> {
  const bucket = await resolveBucket(deps, caller, input.bucketId);
  const contentType = input.contentType ?? contentTypeFor(input.key);
  const tags = input.tags ?? [];
  const expiresIn = deps.config.uploadUrlExpiresIn;
  const now = deps.clock.now();
  await reserveSingleShot(deps.db, caller.orgId, { bucketId: bucket.id, key: input.key, size: input.size, contentType, tags, now, lifetimeMs: expiresIn * 1000 + SINGLE_SHOT_GRACE_MS });
  const signed = deps.storage.presignPut(objectPath(bucket.id, input.key), {
    contentType,
    expiresIn,
    now,
    ...(tags.length > 0 ? { tagging: taggingHeader(tags) } : {}),
  });
  return {
    url: signed.url,
    method: "PUT",
    key: input.key,
    bucketId: bucket.id,
    bucket: bucket.name,
    expiresIn,
    expiresAt: new Date(now.getTime() + expiresIn * 1000).toISOString(),
    headers: signed.headers,
  };
}

export async function createMultipartUpload(
  deps: Deps,
  caller: Caller,
  input: UploadTarget & { contentType?: string | undefined; size?: number | undefined; tags?: string[] | undefined },
): Promise<MultipartUpload> {
  const bucket = await resolveBucket(deps, caller, input.bucketId);
  const contentType = input.contentType ?? contentTypeFor(input.key);
  const tags = input.tags ?? [];
  const now = deps.clock.now();
  const uploadId = await deps.db.transaction((tx) =>
    reserveUpload(tx, caller.orgId, { bucketId: bucket.id, key: input.key, size: input.size, contentType, tags, now, lifetimeMs: MULTIPART_IDLE_MS }, () =>
      deps.storage.createMultipart(objectPath(bucket.id, input.key), { contentType, ...(tags.length > 0 ? { tagging: taggingHeader(tags) } : {}) }),
    ),
  );
  return { uploadId: uploadId!, bucketId: bucket.id, key: input.key, bucket: bucket.name, contentType };
}

/**
 * Reserves the declared size (403 quota_exceeded past the allocation) and records what
 * confirm will need, in the caller's transaction. A multipart upload is started in storage
 * between the two (`startMultipart`), so a refused reservation starts nothing and a failed
 * start leaves no reservation. Returns the multipart upload id, if any.
 */
async function reserveUpload(
  tx: Deps["db"],
  orgId: string,
  r: { bucketId: string; key: string; size: number | undefined; contentType: string; tags: string[]; now: Date; lifetimeMs: number },
  startMultipart?: () => Promise<string>,
): Promise<string | null> {
  await reserveStorage(tx, orgId, r.size ?? 0);
  const uploadId = startMultipart ? await startMultipart() : null;
  await tx.insert(uploadReservations).values({
    orgId,
    bucketId: r.bucketId,
    key: r.key,
    bytes: r.size ?? 0,
    contentType: r.contentType,
    tags: r.tags,
    uploadId,
    expiresAt: new Date(r.now.getTime() + r.lifetimeMs),
    createdAt: r.now,
  });
  return uploadId;
}

/**
 * reserveUpload for a single-shot upload, as one statement: the quota UPDATE locks the
 * organization's usage row until commit, so every presign of an organization waits for the
 * one before it; one statement holds that lock for one round trip instead of four (BEGIN,
 * UPDATE, INSERT, COMMIT), and the commit does not wait for the WAL flush (bench/RESULTS.md,
 * presign: with the flush, an organization's presigns were capped at ~250/s with a p99 over
 * 100 ms on a shared disk). That is safe because a single-shot reservation is soft state: if
 * PostgreSQL itself crashed in the fraction of a second before the WAL writer flushed it, what
 * is lost is a quota hold and the declared tags, not consistency (confirm measures the object
 * and does without a reservation). Multipart keeps reserveUpload: its reservation is how later
 * calls find the upload.
 */
async function reserveSingleShot(
  db: Deps["db"],
  orgId: string,
  r: { bucketId: string; key: string; size: number | undefined; contentType: string; tags: string[]; now: Date; lifetimeMs: number },
): Promise<void> {
  const bytes = r.size ?? 0;
  const rows = rowsOf(
    await db.execute(sql`
      with durability as (select set_config('synchronous_commit', 'off', true)),
      reserved as (
        update org_usage set reserved_storage = reserved_storage + ${bytes}, updated_at = now()
        where org_id = ${orgId} and used_storage + reserved_storage + ${bytes} <= allocated_storage
        returning org_id
      )
      insert into upload_reservations (org_id, bucket_id, key, bytes, content_type, tags, expires_at, created_at)
      select reserved.org_id, ${r.bucketId}, ${r.key}, ${bytes}, ${r.contentType},
        array(select jsonb_array_elements_text(${JSON.stringify(r.tags)}::text::jsonb)),
        ${new Date(r.now.getTime() + r.lifetimeMs).toISOString()}::timestamptz, ${r.now.toISOString()}::timestamptz
      from reserved, durability
      returning id`),
  );
  if (rows.length === 0) throw await quotaExceeded(db, orgId, bytes);
}

async function findMultipart(deps: Deps, caller: Caller, input: UploadTarget & { uploadId: string }) {
  const bucket = await resolveBucket(deps, caller, input.bucketId);
  const [reservation] = await deps.db
    .select()
    .from(uploadReservations)
    .where(
      and(
        eq(uploadReservations.orgId, caller.orgId),
        eq(uploadReservations.bucketId, bucket.id),
        eq(uploadReservations.key, input.key),
        eq(uploadReservations.uploadId, input.uploadId),
      ),
    );
  if (!reservation) throw errors.notFound("Multipart upload");
  return { bucket, reservation };
}

export async function presignUploadPart(
  deps: Deps,
  caller: Caller,
  input: UploadTarget & { uploadId: string; partNumber: number; contentType?: string | undefined },
): Promise<PresignedPart> {
  const { bucket, reservation } = await findMultipart(deps, caller, input);
  const expiresIn = deps.config.uploadUrlExpiresIn;
  const now = deps.clock.now();
  await deps.db
    .update(uploadReservations)
    .set({ expiresAt: new Date(now.getTime() + MULTIPART_IDLE_MS) })
    .where(eq(uploadReservations.id, reservation.id));
  const signed = deps.storage.presignUploadPart(objectPath(bucket.id, input.key), {
    uploadId: input.uploadId,
    partNumber: input.partNumber,
    expiresIn,
    now,
    ...(input.contentType ? { contentType: input.contentType } : {}),
  });
  return { url: signed.url, method: "PUT", partNumber: input.partNumber, expiresIn, headers: signed.headers };
}

/**
 * Assembles the parts. Without a parts list the uploaded parts are listed from storage,
 * in order. Tags given here replace the ones given at create-multipart.
 */
export async function completeUpload(
  deps: Deps,
  caller: Caller,
  input: UploadTarget & { uploadId: string; tags?: string[] | undefined; parts?: { partNumber: number; etag: string }[] | undefined },
): Promise<CompletedUpload> {
  const { bucket, reservation } = await findMultipart(deps, caller, input);
  const path = objectPath(bucket.id, input.key);
  let parts = input.parts;
  if (!parts) {
    parts = (await deps.storage.listParts(path, input.uploadId)).map(({ partNumber, etag }) => ({ partNumber, etag }));
    if (parts.length === 0) throw errors.badRequest("No parts have been uploaded for this upload");
  }
  parts = [...parts].sort((a, b) => a.partNumber - b.partNumber);
  if (new Set(parts.map((p) => p.partNumber)).size !== parts.length) {
    throw errors.validation([{ path: "parts", message: "Part numbers must be unique" }]);
  }
  let etag: string | null;
  try {
    ({ etag } = await deps.storage.completeMultipart(path, input.uploadId, parts));
  } catch (err) {
    throw storageRefusal(err) ?? err;
  }
  const tags = input.tags ?? reservation.tags;
  if (input.tags) {
    await deps.db.update(uploadReservations).set({ tags }).where(eq(uploadReservations.id, reservation.id));
  }
  if (tags.length > 0) await deps.storage.putTags(path, taggingHeader(tags));
  return { bucketId: bucket.id, key: input.key, uploadId: input.uploadId, etag, parts: parts.length };
}

/** Abandons a multipart upload and releases its reservation. */
export async function abortUpload(
  deps: Deps,
  caller: Caller,
  input: UploadTarget & { uploadId: string },
): Promise<AbortedUpload> {
  const { bucket, reservation } = await findMultipart(deps, caller, input);
  await deps.storage.abortMultipart(objectPath(bucket.id, input.key), input.uploadId);
  await deps.db.transaction(async (tx) => {
    const gone = await tx.delete(uploadReservations).where(eq(uploadReservations.id, reservation.id)).returning();
    if (gone.length > 0) await releaseReservation(tx, caller.orgId, reservation.bytes);
  });
  return { bucketId: bucket.id, key: input.key, uploadId: input.uploadId, aborted: true };
}

/**
 * The last step of every upload: reads what storage holds, records the true size, creates or updates the media
 * object and swaps the reservation for the real size; the object hooks (object-hooks.ts) then
 * count usage, apply the upload's tags, plan derivatives and index it, all in one
 * transaction. Confirming the same bytes twice changes nothing.
 */
export async function confirmUpload(deps: Deps, caller: Caller, input: UploadTarget): Promise<MediaObject> {
  const bucket = await resolveBucket(deps, caller, input.bucketId);
  const objectId = await recordStoredObject(deps, caller.orgId, bucket.id, input.key);
  return loadMediaView(deps, caller, objectId);
}

/**
 * The heart of confirm, for any bytes now in storage at `<bucketId>/<key>`: the caller's
 * checks are done (a client's confirm, or the worker storing a set rendition).
 * Returns the media object's id.
 */
export async function recordStoredObject(deps: Deps, orgId: string, bucketId: string, key: string): Promise<string> {
  const stored = await deps.storage.head(objectPath(bucketId, key));
  if (!stored) {
    throw new AppError("not_found", "Nothing has been uploaded at this key yet: PUT the bytes to the presigned URL, then confirm");
  }
  const now = deps.clock.now();
  const { objectId, changed } = await deps.db.transaction(async (tx) => {
    // Confirms of one key run one at a time: a row lock cannot cover an object that does not
    // exist yet, so the key itself is locked for the rest of the transaction.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${bucketId}/${key}`}, 0))`);
    const [existing] = await tx
      .select()
      .from(mediaObjects)
      .where(and(eq(mediaObjects.bucketId, bucketId), eq(mediaObjects.key, key), isNull(mediaObjects.deletedAt)))
      .for("update");
    const reservations = await tx
      .delete(uploadReservations)
      .where(and(eq(uploadReservations.bucketId, bucketId), eq(uploadReservations.key, key)))
      .returning();
    await releaseReservation(tx, orgId, reservations.reduce((n, r) => n + r.bytes, 0));
    const latest = reservations.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
    if (existing && existing.etag === stored.etag && existing.size === stored.size) {
      return { objectId: existing.id, changed: false };
    }
    const contentType = stored.contentType && stored.contentType !== "binary/octet-stream" ? stored.contentType : (latest?.contentType ?? contentTypeFor(key));
    const fields = { size: stored.size, contentType, kind: kindOf(contentType, key), etag: stored.etag, updatedAt: now };
    let id: string;
    if (existing) {
      await tx.update(mediaObjects).set({ ...fields, info: {} }).where(eq(mediaObjects.id, existing.id));
      id = existing.id;
    } else {
      const [row] = await tx
        .insert(mediaObjects)
        .values({ orgId, bucketId, key, createdAt: now, ...fields })
        .returning({ id: mediaObjects.id });
      id = row!.id;
    }
    await runHooks(onObjectStored, {
      tx,
      deps,
      at: now,
      orgId,
      bucketId,
      object: { id, key, kind: fields.kind, size: fields.size, etag: fields.etag },
      previous: existing ? { size: existing.size } : null,
      uploadTags: latest?.tags ?? [],
    });
    return { objectId: id, changed: true };
  });
  if (changed) {
    deps.jobs.kick();
    deps.meters?.uploaded(stored.size);
  }
  return objectId;
}

/** Maps storage's refusals of a completion (bad part list) to a 400 the client can act on. */
function storageRefusal(err: unknown): AppError | null {
  const name = (err as { name?: string; Code?: string })?.name ?? "";
  const known: Record<string, string> = {
    InvalidPart: "One or more parts were not found or their ETags do not match",
    InvalidPartOrder: "Parts must be listed in ascending order",
    EntityTooSmall: "Every part but the last must be at least 5 MiB",
    NoSuchUpload: "The multipart upload does not exist in storage (aborted or already completed)",
  };
  return known[name] ? errors.badRequest(known[name]!, { storageCode: name }) : null;
}

/**
 * Releases reservations whose uploads were never confirmed, aborting multipart uploads in
 * storage. Safe on several instances at once: each row is claimed by deleting it.
 */
export async function sweepExpiredReservations(deps: Deps, limit = 100): Promise<number> {
  const now = deps.clock.now();
  const due = await deps.db
    .select({ id: uploadReservations.id })
    .from(uploadReservations)
    .where(lte(uploadReservations.expiresAt, now))
    .orderBy(desc(uploadReservations.expiresAt))
    .limit(limit);
  if (due.length === 0) return 0;
  const released = await deps.db.transaction(async (tx) => {
    const rows = await tx
      .delete(uploadReservations)
      .where(and(inArray(uploadReservations.id, due.map((d) => d.id)), lte(uploadReservations.expiresAt, now)))
      .returning();
    const perOrg = new Map<string, number>();
    for (const r of rows) perOrg.set(r.orgId, (perOrg.get(r.orgId) ?? 0) + r.bytes);
    for (const [orgId, bytes] of perOrg) await releaseReservation(tx, orgId, bytes);
    return rows;
  });
  for (const r of released) {
    if (!r.uploadId) continue;
    await deps.storage
      .abortMultipart(objectPath(r.bucketId, r.key), r.uploadId)
      .catch((err) => deps.log.warn("abort of an expired multipart upload failed", { uploadId: r.uploadId, error: String(err) }));
  }
  return released.length;
}

/**
 * An import by URL (imports.ts) holds quota as a single-shot presign does: through the same
 * reservation, so its declared size counts against the allocation until the import stores the
 * object (confirm swaps it for the measured size) or fails (imports.ts releases it).
 */
export async function reserveForImport(
  deps: Deps,
  orgId: string,
  r: { bucketId: string; key: string; size: number | undefined; contentType: string; tags: string[]; now: Date; lifetimeMs: number },
): Promise<void> {
  await reserveSingleShot(deps.db, orgId, r);
}
