import { and, asc, eq, inArray, isNull, lte, sql } from "drizzle-orm";
import type { MediaObject } from "../../contract/media.ts";
import type { AbortedUpload, CompletedUpload, MultipartUpload, PresignedPart, PresignedUpload } from "../../contract/presign.ts";
import { mediaObjects, orgUsage, uploadReservations } from "../../db/schema/index.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { AppError, errors } from "../core/errors.ts";
import { within } from "../core/within.ts";
import { contentTypeFor, kindOf } from "./kind.ts";
import { loadMediaView, purgeObject } from "./media.ts";
import { objectPath } from "./storage-keys.ts";
import { lockUsage, pendingStorage, quotaExceeded, releaseReservation, reserveCounted, reserveStorage, uploadRefusal } from "../usage/counters.ts";
import { appendStorageDelta } from "../usage/storage-deltas.ts";
import type { WriteCondition } from "../ports/storage.ts";
import { runHooks } from "./lifecycle.ts";
import { type KeySeen, reserveSingleShot } from "./upload-reservations.ts";
import { onObjectRemoved, onObjectStored } from "./object-hooks.ts";
import { closedOrUnknown, rememberMultipartId } from "./multipart-ids.ts";
import { countPart } from "./upload-parts.ts";

/** A single-shot reservation outlives its URL by this much: a slow PUT may start at the last second. */
const SINGLE_SHOT_GRACE_MS = 60 * 60 * 1000;
/** A multipart upload stays reserved this long after its last part was presigned. */
const MULTIPART_IDLE_MS = 24 * 60 * 60 * 1000;
/** S3's largest single PUT: no URL signs more. */
export const MAX_SINGLE_PUT_BYTES = 5 * 1024 ** 3;

/**
 * Upload tags travel to storage as one header, the labels URL-encoded and joined with "&". A
 * label given twice is sent once: S3 refuses a tag set with a key twice (InvalidTag), which
 * failed the call (or the client's PUT) for what the catalogue records as one tag anyway.
 */
export function taggingHeader(tags: string[]): string {
  return [...new Set(tags)].map((t) => encodeURIComponent(t)).join("&");
}

export interface UploadTarget {
  bucketId: string;
  key: string;
}

/**
 * Single-shot upload, step 1: check the bucket, reserve the declared size, then sign.
 *
 * A declared `size` is an optimistic reservation and an upper bound, never an exact length:
 * any shorter body uploads, and confirm records what storage holds. Without one nothing is
 * reserved, but the URL counts UPLOAD_UNSIZED_MAX_BYTES against the organization's unconfirmed
 * bytes (unconfirmedFits: 403 quota_exceeded when it has too much outstanding). Where storage
 * enforces a signed maximum (the embedded node) the URL carries the size, or that maximum
 * without one, and a longer body is refused at the PUT. Elsewhere nothing bounds the PUT: confirm
 * measures the bytes, and what outgrew its reservation counts only if it fits the allocation,
 * else it is refused and deleted (recordStoredObject). Either way the URL is signed with a
 * write condition on what the key holds now (If-None-Match: * for a free key, If-Match: its
 * ETag otherwise), so the URL works once: after a PUT, a second one is refused with 412.
 */
export async function presignUpload(
  deps: Deps,
  caller: Caller,
  input: UploadTarget & { contentType?: string | undefined; size?: number | undefined; tags?: string[] | undefined; overwrite?: boolean | undefined },
): Promise<PresignedUpload> {
  // Outside a restricted key's bucket: 404 or 403 as everywhere (resolveBucket throws either).
  if (caller.bucketId && caller.bucketId !== input.bucketId) await resolveBucket(deps, caller, input.bucketId);
  // Checked before anything is reserved, so the usual refusal holds nothing.
  if (input.overwrite === false) await refuseTakenKey(deps, input.bucketId, input.key);
  const contentType = input.contentType ?? contentTypeFor(input.key);
  const tags = input.tags ?? [];
  const expiresIn = deps.config.uploadUrlExpiresIn;
  const now = deps.clock.now();
  const unsizedMax = deps.config.uploadUnsizedMaxBytes;
  const counts = input.size ?? unsizedMax;
  const r = { bucketId: input.bucketId, key: input.key, size: input.size, counts, slack: unsizedMax, contentType, tags, now, lifetimeMs: expiresIn * 1000 + SINGLE_SHOT_GRACE_MS };
  const seen = await reserveSingleShot(deps.db, caller.orgId, r);
  if (!seen) {
    await resolveBucket(deps, caller, input.bucketId); // 404 for a bucket the organization lacks
    throw await uploadRefusal(deps.db, caller.orgId, { declared: input.size ?? 0, counted: counts, slack: unsizedMax });
  }
  // An object confirmed at the key between the check and the reservation would be signed
  // If-Match: refused too (its reservation is released by the sweeper, as for any unused URL).
  if (input.overwrite === false && seen.etag !== null) await refuseTakenKey(deps, input.bucketId, input.key);
  const bucket = { id: input.bucketId, name: seen.bucketName };
  const path = objectPath(bucket.id, input.key);
  const signed = deps.storage.presignPut(path, {
    contentType,
    expiresIn,
    now,
    condition: await writeCondition(deps, path, seen),
    maxLength: Math.min(counts, MAX_SINGLE_PUT_BYTES),
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

/**
 * `overwrite: false` on an upload: 409 conflict when a live object holds the key. Bytes of a
 * deleted object still in the trash do not count (an upload may take its key, as always).
 */
async function refuseTakenKey(deps: Deps, bucketId: string, key: string): Promise<void> {
  const [live] = await deps.db
    .select({ id: mediaObjects.id })
    .from(mediaObjects)
    .where(and(eq(mediaObjects.bucketId, bucketId), eq(mediaObjects.key, key), isNull(mediaObjects.deletedAt)))
    .limit(1);
  if (live) throw errors.conflict("An object already holds this key (overwrite: false was sent)", { objectId: live.id });
}

/** Longest wait for storage when the catalogue cannot tell what a key holds; then the catalogue's view is signed. */
const HEAD_FOR_CONDITION_MS = 2000;

/**
 * The write condition for a presigned PUT: the catalogue knows what the key holds, except
 * when an earlier upload was never confirmed (its bytes may be there) or a purge is under
 * way; only then is storage asked. A storage that does not answer promptly leaves the
 * catalogue's view, which at worst makes the PUT a 412 the client can presign again after.
 */
async function writeCondition(deps: Deps, path: string, seen: KeySeen): Promise<WriteCondition> {
  let etag = seen.etag;
  if (seen.unsure) {
    const found = await within(deps.storage.head(path), HEAD_FOR_CONDITION_MS, "late" as const);
    if (found !== "late") etag = found?.etag ?? null;
  }
  return etag ? { ifMatch: etag } : { ifNoneMatch: "*" };
}

export async function createMultipartUpload(
  deps: Deps,
  caller: Caller,
  input: UploadTarget & { contentType?: string | undefined; size?: number | undefined; tags?: string[] | undefined; overwrite?: boolean | undefined },
): Promise<MultipartUpload> {
  const bucket = await resolveBucket(deps, caller, input.bucketId);
  if (input.overwrite === false) await refuseTakenKey(deps, bucket.id, input.key);
  const contentType = input.contentType ?? contentTypeFor(input.key);
  const tags = input.tags ?? [];
  const now = deps.clock.now();
  const uploadId = await deps.db.transaction(async (tx) => {
    const r = { bucketId: bucket.id, key: input.key, size: input.size, contentType, tags, now, lifetimeMs: MULTIPART_IDLE_MS, slack: deps.config.uploadUnsizedMaxBytes };
    const started = await reserveUpload(tx, caller.orgId, r, () =>
      deps.storage.createMultipart(objectPath(bucket.id, input.key), { contentType, ...(tags.length > 0 ? { tagging: taggingHeader(tags) } : {}) }),
    );
    await rememberMultipartId(tx, { orgId: caller.orgId, bucketId: bucket.id, key: input.key, uploadId: started!, now });
    return started;
  });
  return { uploadId: uploadId!, bucketId: bucket.id, key: input.key, bucket: bucket.name, contentType };
}

/**
 * Reserves the declared size (403 quota_exceeded past the allocation) and records what
 * confirm will need, in the caller's transaction. A multipart upload is started in storage
 * between the two (`startMultipart`), so a refused reservation starts nothing and a failed
 * start leaves no reservation. Returns the multipart upload id, if any. With `slack`, a
 * client's upload: the declared size also counts against the unconfirmed bound (its parts
 * count as they are presigned, countPart); without, bytes the service itself stores.
 */
async function reserveUpload(
  tx: Deps["db"],
  orgId: string,
  r: { bucketId: string; key: string; size: number | undefined; contentType: string; tags: string[]; now: Date; lifetimeMs: number; slack?: number },
  startMultipart?: () => Promise<string>,
): Promise<string | null> {
  if (r.slack !== undefined) await reserveCounted(tx, orgId, { declared: r.size ?? 0, counted: r.size ?? 0, slack: r.slack });
  else await reserveStorage(tx, orgId, r.size ?? 0);
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
 * Reserves `size` bytes of the organization's allocation for bytes about to be stored at
 * `<bucketId>/<key>` by something other than a client's presigned PUT (a set rendition, an
 * import by URL), or refuses with 403 quota_exceeded. Without a size nothing is held, as for
 * a presign without one: recording measures. recordStoredObject swaps the hold for the
 * measured size and applies `tags`; a hold never recorded expires after `lifetimeMs` and the
 * sweeper releases it (and deletes bytes stored at the key but never recorded).
 */
export async function reserveUploadQuota(
  deps: Deps,
  orgId: string,
  r: { bucketId: string; key: string; size: number | undefined; contentType?: string; tags?: string[]; lifetimeMs?: number; now?: Date },
): Promise<void> {
  const now = r.now ?? deps.clock.now();
  await deps.db.transaction((tx) =>
    reserveUpload(tx, orgId, {
      bucketId: r.bucketId,
      key: r.key,
      size: r.size,
      contentType: r.contentType ?? contentTypeFor(r.key),
      tags: r.tags ?? [],
      now,
      lifetimeMs: r.lifetimeMs ?? SINGLE_SHOT_GRACE_MS,
    }),
  );
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
  if (!reservation) throw await closedOrUnknown(deps.db, { orgId: caller.orgId, bucketId: bucket.id, key: input.key, uploadId: input.uploadId });
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
  const path = objectPath(bucket.id, input.key);
  const expiresAt = new Date(now.getTime() + MULTIPART_IDLE_MS);
  const maxLength = await countPart(deps, { orgId: caller.orgId, reservation, path, partNumber: input.partNumber, expiresAt });
  const signed = deps.storage.presignUploadPart(path, {
    uploadId: input.uploadId,
    partNumber: input.partNumber,
    expiresIn,
    now,
    maxLength,
    ...(input.contentType ? { contentType: input.contentType } : {}),
  });
  return { url: signed.url, method: "PUT", partNumber: input.partNumber, expiresIn, headers: signed.headers };
}

/**
 * Assembles the parts. Without a parts list the uploaded parts are listed from storage,
 * in order. Tags given here replace the ones given at create-multipart.
 *
 * Part URLs are bounded one by one only where storage enforces a signed maximum (countPart;
 * S3 can only sign an exact length), so the parts are measured here, before they are assembled:
 * a total above what was reserved must have its excess reserved now, or the upload is refused
 * with 403 quota_exceeded and aborted (its parts deleted, its reservation released).
 */
export async function completeUpload(
  deps: Deps,
  caller: Caller,
  input: UploadTarget & { uploadId: string; tags?: string[] | undefined; parts?: { partNumber: number; etag: string }[] | undefined; overwrite?: boolean | undefined },
): Promise<CompletedUpload> {
  const { bucket, reservation } = await findMultipart(deps, caller, input);
  // Checked again as the parts become the object: the upload stays open, to be completed later with overwrite.
  if (input.overwrite === false) await refuseTakenKey(deps, bucket.id, input.key);
  const path = objectPath(bucket.id, input.key);
  let uploaded: { partNumber: number; etag: string; size: number }[];
  try {
    uploaded = await deps.storage.listParts(path, input.uploadId);
  } catch (err) {
    throw storageRefusal(err) ?? err;
  }
  let parts = input.parts;
  if (!parts) {
    parts = uploaded.map(({ partNumber, etag }) => ({ partNumber, etag }));
    if (parts.length === 0) throw errors.badRequest("No parts have been uploaded for this upload");
  }
  parts = [...parts].sort((a, b) => a.partNumber - b.partNumber);
  if (new Set(parts.map((p) => p.partNumber)).size !== parts.length) {
    throw errors.validation([{ path: "parts", message: "Part numbers must be unique" }]);
  }
  const sizes = new Map(uploaded.map((p) => [p.partNumber, p.size]));
  const total = parts.reduce((n, p) => n + (sizes.get(p.partNumber) ?? 0), 0);
  if (total > reservation.bytes) await reserveExcess(deps, caller.orgId, bucket.id, input.key, reservation, total);
  let etag: string | null;
  try {
    ({ etag } = await deps.storage.completeMultipart(path, input.uploadId, parts));
  } catch (err) {
    throw storageRefusal(err) ?? err;
  }
  const tags = input.tags ?? reservation.tags;
  // The parts are one object now, counted as reserved (reserveExcess): their count is done.
  await deps.db
    .update(uploadReservations)
    .set({ bound: null, parts: null, ...(input.tags ? { tags } : {}) })
    .where(eq(uploadReservations.id, reservation.id));
  if (tags.length > 0) await deps.storage.putTags(path, taggingHeader(tags));
  return { bucketId: bucket.id, key: input.key, uploadId: input.uploadId, etag, parts: parts.length };
}

/** Grows a multipart reservation to the measured total, or aborts the upload and refuses it. */
async function reserveExcess(
  deps: Deps,
  orgId: string,
  bucketId: string,
  key: string,
  reservation: typeof uploadReservations.$inferSelect,
  total: number,
): Promise<void> {
  try {
    // The upload's row before the organization's usage row, the order confirm and countPart take them in.
    await deps.db.transaction(async (tx) => {
      await tx.update(uploadReservations).set({ bytes: total }).where(eq(uploadReservations.id, reservation.id));
      await reserveStorage(tx, orgId, total - reservation.bytes);
    });
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== "quota_exceeded") throw err;
    await deps.storage.abortMultipart(objectPath(bucketId, key), reservation.uploadId!);
    await deps.db.transaction(async (tx) => {
      const gone = await tx.delete(uploadReservations).where(eq(uploadReservations.id, reservation.id)).returning();
      if (gone.length > 0) await releaseReservation(tx, orgId, reservation.bytes);
    });
    throw new AppError("quota_exceeded", `The parts total ${total} bytes, more than this upload reserved (${reservation.bytes}) and more than the allocation has left: the upload was aborted`, {
      ...(err.details as object),
      requested: total,
    });
  }
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
 *
 * Bytes beyond what was reserved for the key (an upload presigned without a size, or a PUT
 * longer than its declared size on a store that does not bound it) count only if they fit the
 * allocation; otherwise they are refused with 403 quota_exceeded and deleted
 * from storage, and nothing is recorded. An object they replaced (its bytes are gone already)
 * is deleted with them.
 */
export async function recordStoredObject(deps: Deps, orgId: string, bucketId: string, key: string): Promise<string> {
  const path = objectPath(bucketId, key);
  const stored = await deps.storage.head(path);
  if (!stored) {
    throw new AppError("not_found", "Nothing has been uploaded at this key yet: PUT the bytes to the presigned URL, then confirm");
  }
  const now = deps.clock.now();
  const outcome = await deps.db.transaction(async (tx) => {
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
    const reserved = reservations.reduce((n, r) => n + r.bytes, 0);
    // What the upload reserved is given back with the object's counting (countStoredObject),
    // or alone when nothing is counted; appended either way, not an update of the usage row.
    const giveBack = () => appendStorageDelta(tx, orgId, { bucketId, bytes: 0, reserved: -reserved, objects: 0 }, now);
    const latest = reservations.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
    if (existing && existing.etag === stored.etag && existing.size === stored.size) {
      await giveBack();
      return { objectId: existing.id, changed: false } as const;
    }
    const growth = stored.size - (existing?.size ?? 0);
    if (stored.size > reserved && growth > 0 && !(await fitsAllocation(tx, orgId, growth, reserved))) {
      await giveBack();
      if (existing) {
        await tx.update(mediaObjects).set({ deletedAt: now }).where(eq(mediaObjects.id, existing.id));
        await runHooks(onObjectRemoved, { tx, deps, at: now, orgId, bucketId, how: "deleted", object: existing });
      }
      return { refused: growth, replaced: existing?.id ?? null } as const;
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
      released: reserved,
    });
    return { objectId: id, changed: true } as const;
  });
  if ("refused" in outcome) {
    // The object they replaced is purged now (its bytes were overwritten); else only the bytes go.
    if (outcome.replaced) await purgeObject(deps, outcome.replaced);
    else await deps.storage.delete(path);
    deps.log.info("bytes over the allocation refused at confirm and deleted", { orgId, bucketId, bytes: stored.size });
    throw await quotaExceeded(deps.db, orgId, outcome.refused ?? stored.size);
  }
  if (outcome.changed) {
    deps.jobs.kick();
    deps.meters?.uploaded(stored.size);
  }
  return outcome.objectId;
}

/**
 * Whether `growth` more bytes fit the allocation beside what is used and reserved (less the
 * `released` bytes this confirm gives back), checked with the organization's usage row locked
 * (a conditional UPDATE), so concurrent confirms cannot together pass it; the lock is held
 * until the caller's transaction ends. Only a confirm that outgrew its reservation (or had
 * none: a presign without a size) takes this lock; a declared size confirms without it.
 */
async function fitsAllocation(tx: Deps["db"], orgId: string, growth: number, released: number): Promise<boolean> {
  await lockUsage(tx, orgId);
  const [ok] = await tx
    .update(orgUsage)
    .set({ updatedAt: sql`now()` })
    .where(
      and(
        eq(orgUsage.orgId, orgId),
        sql`${orgUsage.usedStorage} + ${orgUsage.reservedStorage} + ${pendingStorage(orgId)} - ${released} + ${growth} <= ${orgUsage.allocatedStorage}`,
      ),
    )
    .returning({ orgId: orgUsage.orgId });
  return ok !== undefined;
}

/**
 * Maps storage's refusals of a completion to what the client can act on: a bad part list is a
 * 400; an upload storage no longer has (completed or aborted, e.g. complete-upload repeated)
 * is a 409 conflict: the upload id is known, its state forbids the call.
 */
function storageRefusal(err: unknown): AppError | null {
  const name = (err as { name?: string; Code?: string })?.name ?? "";
  const known: Record<string, string> = {
    InvalidPart: "One or more parts were not found or their ETags do not match",
    InvalidPartOrder: "Parts must be listed in ascending order",
    EntityTooSmall: "Every part but the last must be at least 5 MiB",
  };
  // Ceph answers ListParts of an upload it no longer has with NoSuchKey (docs/storage.md).
  if (name === "NoSuchUpload" || name === "NoSuchKey") {
    return new AppError("conflict", "The multipart upload is no longer open in storage: it was already completed (confirm the key) or aborted", { storageCode: name });
  }
  return known[name] ? errors.badRequest(known[name]!, { storageCode: name }) : null;
}

/** Batches one sweep releases at most (10,000 reservations by default); the next pass, a minute later, goes on. */
const SWEEP_BATCHES = 100;

/**
 * Releases reservations whose uploads were never confirmed, aborting multipart uploads in
 * storage and collecting bytes that were stored but never confirmed. Safe on several
 * instances at once: each row is claimed by deleting it.
 *
 * Oldest first, `limit` at a time, until none is due (or SWEEP_BATCHES): a pass once took the
 * 100 latest, so a flood of reservations expiring (1,200 upload URLs a minute are allowed)
 * kept the older ones, and the bytes PUT to them, from ever being collected.
 */
export async function sweepExpiredReservations(deps: Deps, limit = 100): Promise<number> {
  let swept = 0;
  for (let batch = 0; batch < SWEEP_BATCHES; batch++) {
    const released = await sweepSome(deps, limit);
    swept += released;
    if (released < limit) break;
  }
  return swept;
}

async function sweepSome(deps: Deps, limit: number): Promise<number> {
  const now = deps.clock.now();
  const due = await deps.db
    .select({ id: uploadReservations.id })
    .from(uploadReservations)
    .where(lte(uploadReservations.expiresAt, now))
    .orderBy(asc(uploadReservations.expiresAt))
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
    if (r.uploadId) {
      await deps.storage
        .abortMultipart(objectPath(r.bucketId, r.key), r.uploadId)
        .catch((err) => deps.log.warn("abort of an expired multipart upload failed", { uploadId: r.uploadId, error: String(err) }));
    }
    await collectUnconfirmed(deps, r).catch((err) =>
      deps.log.warn("collecting unconfirmed bytes failed; retried when another upload at the key expires", { bucketId: r.bucketId, key: r.key, error: String(err) }),
    );
  }
  return released.length;
}

/**
 * After the last reservation at a key expired (its URL long dead): bytes in storage there
 * that the catalogue does not hold were PUT and never confirmed. With no object at the key
 * they are deleted; over an object (a replacement never confirmed) they are recorded as
 * confirm would, which refuses and deletes them when they do not fit the allocation. Bytes
 * the catalogue holds, live or in the trash, are left alone.
 */
async function collectUnconfirmed(deps: Deps, r: typeof uploadReservations.$inferSelect): Promise<void> {
  const stillOpen = async () =>
    (await deps.db.select({ id: uploadReservations.id }).from(uploadReservations).where(and(eq(uploadReservations.bucketId, r.bucketId), eq(uploadReservations.key, r.key))).limit(1)).length > 0;
  if (await stillOpen()) return;
  const path = objectPath(r.bucketId, r.key);
  const stored = await deps.storage.head(path);
  if (!stored) return;
  const rows = await deps.db
    .select({ id: mediaObjects.id, etag: mediaObjects.etag, size: mediaObjects.size, deletedAt: mediaObjects.deletedAt })
    .from(mediaObjects)
    .where(and(eq(mediaObjects.orgId, r.orgId), eq(mediaObjects.bucketId, r.bucketId), eq(mediaObjects.key, r.key)));
  if (rows.some((o) => o.etag === stored.etag && o.size === stored.size)) return;
  if (rows.some((o) => o.deletedAt === null)) {
    await recordStoredObject(deps, r.orgId, r.bucketId, r.key).catch((err) => {
      if (!(err instanceof AppError && err.code === "quota_exceeded")) throw err;
    });
    return;
  }
  if (await stillOpen()) return;
  await deps.storage.delete(path);
  deps.log.info("unconfirmed bytes deleted", { orgId: r.orgId, bucketId: r.bucketId, bytes: stored.size });
}
