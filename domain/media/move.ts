import { and, eq, gt, isNull, like, sql } from "drizzle-orm";
import type { MediaObject } from "../../contract/media.ts";
import type { Db } from "../../db/client.ts";
import { derivatives, mediaObjects, uploadReservations } from "../../db/schema/index.ts";
import { type Caller, hasScope } from "../access/caller.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { announceUpdated } from "../events/object-events.ts";
import { touchSearch } from "../search/index-rows.ts";
import { appendStorageDelta } from "../usage/storage-deltas.ts";
import { deleteMedia, loadMediaView } from "./media.ts";
import { resolveLiveObject } from "./object-refs.ts";
import { derivativePrefix, objectPath } from "./storage-keys.ts";

/**
 * Moving or renaming an object: the same object (id, labels, metadata, set memberships,
 * derivatives) at a new key, in its bucket or another of the organization.
 *
 * Storage has no rename, so the order is what keeps every step safe to stop at:
 * 0. the target key is claimed (claimKey), so no other move copies there meanwhile;
 * 1. an object the move replaces (overwrite) goes to the trash first, as media_delete would;
 * 2. the bytes are copied to the new key (and, across buckets, the derivatives to the new
 *    bucket's derivative prefix);
 * 3. one transaction points the catalogue at the copy;
 * 4. the old bytes (and, across buckets, the old derivative files) are deleted.
 * A failure before 3 leaves the object where it was, and the copy at the new key unrecorded; a
 * failure at 4 leaves the old bytes unrecorded. The claim's expiry (the sweeper), reconcile or
 * the purge of a deleted object at that key deletes such bytes, so nothing is kept for good.
 *
 * Scopes: the tool needs write (the object's content is kept, as a metadata change keeps it);
 * replacing another object deletes that one, so overwrite also needs delete.
 */
export interface MoveTarget {
  key: string;
  bucketId?: string | undefined;
  overwrite?: boolean | undefined;
  /** More changes of the object, made in the transaction that moves it (a bulk update's labels): all or none. */
  alsoInTx?: ((tx: Db) => Promise<void>) | undefined;
}

export async function moveObject(deps: Deps, caller: Caller, id: string, target: MoveTarget): Promise<MediaObject> {
  await moveOne(deps, caller, id, target);
  deps.jobs.kick();
  return loadMediaView(deps, caller, id);
}

/** The move itself, without kicking the jobs it queued (bulk moves kick once); returns the new key. */
export async function moveOne(deps: Deps, caller: Caller, id: string, target: MoveTarget): Promise<string> {
  const src = await resolveLiveObject(deps.db, caller, id);
  const bucketId = target.bucketId ?? src.bucketId;
  // Another bucket: 404 outside the organization, 403 outside a restricted key's bucket.
  if (bucketId !== src.bucketId) await resolveBucket(deps, caller, bucketId);
  if (bucketId === src.bucketId && target.key === src.key) return src.key;

  const from = objectPath(src.bucketId, src.key);
  const to = objectPath(bucketId, target.key);
  const { holder, claimId } = await claimKey(deps, caller, src, bucketId, target);
  try {
    if (holder) await deleteMedia(deps, caller, holder.id);
  } catch (err) {
    await deps.db.delete(uploadReservations).where(eq(uploadReservations.id, claimId));
    throw err;
  }

  const now = deps.clock.now();
  const crossing = bucketId !== src.bucketId;
  let copied: { etag: string | null } | null = null;
  try {
    copied = await deps.storage.copy(from, to);
    const moves = crossing ? await copyDerivatives(deps, src.id, src.bucketId, bucketId) : [];
    await deps.db.transaction(async (tx) => {
      // The locks a confirm of either key takes: an upload confirmed meanwhile waits or is seen.
      for (const path of [from, to].sort()) await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${path}, 0))`);
      const [row] = await tx
        .select()
        .from(mediaObjects)
        .where(and(eq(mediaObjects.id, id), eq(mediaObjects.orgId, caller.orgId), isNull(mediaObjects.deletedAt)))
        .for("update");
      if (!row) throw errors.notFound("Media object");
      if (row.bucketId !== src.bucketId || row.key !== src.key || row.etag !== src.etag) {
        throw errors.conflict("The object changed while it was being moved (new bytes, or moved by another call): try again");
      }
      // An upload confirmed at the key meanwhile took the claim with its own reservations.
      const claim = await tx.delete(uploadReservations).where(eq(uploadReservations.id, claimId)).returning({ id: uploadReservations.id });
      if (claim.length === 0 || (await liveAt(tx, bucketId, target.key))) throw errors.conflict("Another object took this key while the move ran");
      await tx.update(mediaObjects).set({ bucketId, key: target.key, etag: copied!.etag ?? row.etag, updatedAt: now }).where(eq(mediaObjects.id, id));
      // A copy may get another ETag (S3 gives a multipart upload's copy a plain one): the
      // derivatives made from these bytes still describe them.
      if (copied!.etag && row.etag && copied!.etag !== row.etag) {
        await tx.update(derivatives).set({ sourceEtag: copied!.etag }).where(and(eq(derivatives.objectId, id), eq(derivatives.sourceEtag, row.etag)));
      }
      if (crossing) {
        // Cached renders are made again on demand; the rest point at their copies.
        await tx.delete(derivatives).where(and(eq(derivatives.objectId, id), like(derivatives.variant, "render-%")));
        for (const m of moves) await tx.update(derivatives).set({ storageKey: m.to }).where(eq(derivatives.id, m.id));
        await appendStorageDelta(tx, caller.orgId, { bucketId: src.bucketId, bytes: -row.size, objects: -1 }, now);
        await appendStorageDelta(tx, caller.orgId, { bucketId, bytes: row.size, objects: 1 }, now);
      }
      await target.alsoInTx?.(tx);
      await touchSearch(tx, deps, caller.orgId, [id]);
      await announceUpdated(tx, caller.orgId, [id], ["key"], now);
    });
  } catch (err) {
    // The copy stays unrecorded: taken back at once when nothing else holds the key (else, or
    // should this fail too, the claim's expiry has the sweeper collect it), and the claim freed.
    await deps.db.delete(uploadReservations).where(eq(uploadReservations.id, claimId)).catch(() => {});
    if (copied && !holder && !(await liveAt(deps.db, bucketId, target.key))) await deps.storage.delete(to).catch(() => {});
    throw err;
  }
  await cleanUpAfterMove(deps, { objectId: id, bucketId: src.bucketId, key: src.key, etag: src.etag }).catch((err) =>
    deps.log.warn("a moved object's old bytes were not deleted (reconcile will)", { objectId: id, error: String(err) }),
  );
  return target.key;
}

/** The live object at a key, if any. */
async function liveAt(db: Db, bucketId: string, key: string): Promise<{ id: string } | undefined> {
  const [row] = await db
    .select({ id: mediaObjects.id })
    .from(mediaObjects)
    .where(and(eq(mediaObjects.bucketId, bucketId), eq(mediaObjects.key, key), isNull(mediaObjects.deletedAt)))
    .limit(1);
  return row;
}

/** Long enough for storage to copy the largest single object; a claim left by a crash expires then. */
const MOVE_CLAIM_MS = 60 * 60_000;

/**
 * Claims the target key for the move, under the lock a confirm of that key takes: a live
 * object there is a conflict (or, with overwrite, the object to replace), and so is an upload
 * presigned there and not confirmed, or another move under way (its claim). The claim is an
 * upload reservation of no bytes: should the service stop before the catalogue follows, it
 * expires and the sweeper deletes the copy nothing recorded, as for any unconfirmed upload.
 */
async function claimKey(deps: Deps, caller: Caller, src: { contentType: string }, bucketId: string, target: MoveTarget): Promise<{ holder: { id: string } | undefined; claimId: string }> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${objectPath(bucketId, target.key)}, 0))`);
    const holder = await liveAt(tx, bucketId, target.key);
    if (holder && !target.overwrite) {
      throw errors.conflict("An object already holds this key: send overwrite: true to replace it (the replaced object goes to the trash)", { objectId: holder.id });
    }
    if (holder && !hasScope(caller, "delete")) throw errors.forbidden("Replacing an object moves it to the trash, so overwrite needs the 'delete' scope");
    const [pending] = await tx
      .select({ id: uploadReservations.id })
      .from(uploadReservations)
      .where(and(eq(uploadReservations.bucketId, bucketId), eq(uploadReservations.key, target.key), gt(uploadReservations.expiresAt, now)))
      .limit(1);
    if (pending) throw errors.conflict("An upload or another move to this key is under way: try again once it is done (an upload's URL expires otherwise)");
    const [claim] = await tx
      .insert(uploadReservations)
      .values({ orgId: caller.orgId, bucketId, key: target.key, bytes: 0, contentType: src.contentType, tags: [], uploadId: null, expiresAt: new Date(now.getTime() + MOVE_CLAIM_MS), createdAt: now })
      .returning({ id: uploadReservations.id });
    return { holder, claimId: claim!.id };
  });
}

/**
 * Copies an object's derivative files (not its cached renders) to the new bucket's prefix.
 * A file already gone is left out: its row keeps pointing at the new place, and reconcile
 * makes a missing thumbnail again.
 */
async function copyDerivatives(deps: Deps, objectId: string, fromBucket: string, toBucket: string): Promise<{ id: string; to: string }[]> {
  const oldPrefix = derivativePrefix(fromBucket, objectId);
  const newPrefix = derivativePrefix(toBucket, objectId);
  const rows = await deps.db.select({ id: derivatives.id, variant: derivatives.variant, storageKey: derivatives.storageKey }).from(derivatives).where(eq(derivatives.objectId, objectId));
  const moves: { id: string; to: string }[] = [];
  for (const r of rows) {
    if (!r.storageKey || r.variant.startsWith("render-") || !r.storageKey.startsWith(oldPrefix)) continue;
    const to = newPrefix + r.storageKey.slice(oldPrefix.length);
    if (await deps.storage.head(r.storageKey)) await deps.storage.copy(r.storageKey, to);
    moves.push({ id: r.id, to });
  }
  return moves;
}

/**
 * Deletes the bytes a move left at the old key, unless the key holds something else by now
 * (a new upload, recorded or not: its ETag differs), and, after a move across buckets, the old
 * derivative prefix unless the object has come back there.
 */
async function cleanUpAfterMove(deps: Deps, job: { objectId: string; bucketId: string; key: string; etag: string | null }): Promise<void> {
  const path = objectPath(job.bucketId, job.key);
  const stored = await deps.storage.head(path);
  if (stored && stored.etag === job.etag && !(await liveAt(deps.db, job.bucketId, job.key))) await deps.storage.delete(path);
  const [now] = await deps.db.select({ bucketId: mediaObjects.bucketId }).from(mediaObjects).where(eq(mediaObjects.id, job.objectId));
  if (now && now.bucketId !== job.bucketId) await deps.storage.deletePrefix(derivativePrefix(job.bucketId, job.objectId));
}
