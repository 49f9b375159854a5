import { and, count, desc, eq, gt, isNotNull, isNull, type SQL, sql } from "drizzle-orm";
import type { MediaObject } from "../../contract/media.ts";
import type { Purged, TrashBlocker, TrashedObject } from "../../contract/trash.ts";
import { mediaObjects } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import { assertBucketAllowed } from "../access/visibility.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { enqueueJob } from "../core/jobs.ts";
import { type Page, page } from "../core/pagination.ts";
import { quotaExceeded } from "../usage/counters.ts";
import { foldStorage } from "../usage/storage-deltas.ts";
import { runHooks } from "./lifecycle.ts";
import { loadMediaView, purgeObject, viewsOf } from "./media.ts";
import { onObjectRestored } from "./object-hooks.ts";
import { RETENTION_DAYS, restorableUntil } from "./retention.ts";
import { objectPath } from "./storage-keys.ts";

/**
 * The trash: deleted objects inside the retention window, which a restore brings back as they
 * were (tags, categories, derivatives and set memberships were never removed by the delete) or
 * a purge removes now. Objects live at `<bucketId>/<key>`, so an upload at the same key after
 * the delete overwrote the deleted object's bytes: such an object cannot be restored (409), and
 * stays in the trash until it is purged, sparing the newer bytes.
 */


const retentionCutoff = (deps: Deps) => new Date(deps.clock.now().getTime() - RETENTION_DAYS * 86_400_000);

/** In the trash: deleted, within retention, and no purge under way. */
const inTrash = (deps: Deps): SQL => and(isNotNull(mediaObjects.deletedAt), gt(mediaObjects.deletedAt, retentionCutoff(deps)), isNull(mediaObjects.purgeQueuedAt))!;

/**
 * A live object at the key, or else any object created at the key since this one was deleted.
 * Written against the table's own name: Drizzle leaves columns unqualified in one-table
 * selects, which inside these subqueries would mean the subquery's rows.
 */
const blockerSql = sql<TrashBlocker | null>`case
  when exists (select 1 from media_objects l where l.bucket_id = media_objects.bucket_id and l.key = media_objects.key and l.deleted_at is null) then 'key_in_use'
  when exists (select 1 from media_objects n where n.bucket_id = media_objects.bucket_id and n.key = media_objects.key and n.id <> media_objects.id and n.created_at >= media_objects.deleted_at) then 'key_reused'
end`;

export async function listTrash(deps: Deps, caller: Caller, q: { bucketId?: string | undefined; limit: number; offset: number }): Promise<Page<TrashedObject>> {
  const where: SQL[] = [eq(mediaObjects.orgId, caller.orgId), inTrash(deps)];
  const bucketId = q.bucketId ? (await resolveBucket(deps, caller, q.bucketId)).id : caller.bucketId;
  if (bucketId) where.push(eq(mediaObjects.bucketId, bucketId));
  const filter = and(...where);
  const [rows, [{ total } = { total: 0 }]] = await Promise.all([
    deps.db
      .select({ row: mediaObjects, blockedBy: blockerSql })
      .from(mediaObjects)
      .where(filter)
      .orderBy(desc(mediaObjects.deletedAt), desc(mediaObjects.id))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.select({ total: count() }).from(mediaObjects).where(filter),
  ]);
  const views = await viewsOf(deps, caller.orgId, rows.map((r) => r.row.id), { live: false });
  return page(
    views.map((v, i) => {
      const { row, blockedBy } = rows[i]!;
      return { ...v, deletedAt: row.deletedAt!.toISOString(), restorableUntil: restorableUntil(row.deletedAt!).toISOString(), restorable: blockedBy === null, blockedBy };
    }),
    total,
    q.offset,
  );
}

/** The trashed object, in the caller's organization (404) and, for a restricted key, bucket (403). */
async function resolveTrashed(db: Deps["db"], deps: Deps, caller: Caller, id: string, lock: boolean) {
  const q = db
    .select({ row: mediaObjects, blockedBy: blockerSql })
    .from(mediaObjects)
    .where(and(eq(mediaObjects.id, id), eq(mediaObjects.orgId, caller.orgId), inTrash(deps)));
  const [found] = lock ? await q.for("update", { of: mediaObjects }) : await q;
  if (!found) throw errors.notFound("Deleted media object (not in the trash, or past retention)");
  assertBucketAllowed(caller, found.row.bucketId, "The media object");
  return found;
}

/**
 * Brings a deleted object back. Refused with 409 when the key was used since (see above) or
 * the stored bytes are no longer the ones deleted, and with 403 quota_exceeded when the
 * organization has no room for it now (the quota is checked again, as for an upload).
 */
export async function restoreObject(deps: Deps, caller: Caller, id: string): Promise<MediaObject> {
  const { row: seen } = await resolveTrashed(deps.db, deps, caller, id, false);
  const stored = await deps.storage.head(objectPath(seen.bucketId, seen.key));
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    // The confirm of an upload to the same key takes this lock first too: one of them waits.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${seen.bucketId}/${seen.key}`}, 0))`);
    const { row, blockedBy } = await resolveTrashed(tx, deps, caller, id, true);
    if (blockedBy) {
      const [holder] = await tx
        .select({ id: mediaObjects.id })
        .from(mediaObjects)
        .where(and(eq(mediaObjects.bucketId, row.bucketId), eq(mediaObjects.key, row.key), isNull(mediaObjects.deletedAt)));
      throw errors.conflict(
        blockedBy === "key_in_use"
          ? "Another object holds this key now: its upload replaced these bytes, so this object cannot be restored"
          : "The key was used by another upload since this object was deleted: its bytes were replaced, so it cannot be restored",
        { reason: blockedBy, ...(holder ? { objectId: holder.id } : {}) },
      );
    }
    // Bytes put at the key and never confirmed replace them just as well.
    if (!stored || stored.etag !== row.etag || stored.size !== row.size) {
      throw errors.conflict("The bytes stored at this key are no longer the ones deleted, so this object cannot be restored", { reason: "bytes_replaced" });
    }
    // Folded under the usage row's lock, which orders restores: the check sees exact counters.
    const usage = await foldStorage(tx, caller.orgId, now);
    if (!usage || usage.usedStorage + usage.reservedStorage + row.size > usage.allocatedStorage) throw await quotaExceeded(tx, caller.orgId, row.size);
    await tx.update(mediaObjects).set({ deletedAt: null, updatedAt: now }).where(eq(mediaObjects.id, row.id));
    await runHooks(onObjectRestored, {
      tx,
      deps,
      at: now,
      orgId: caller.orgId,
      bucketId: row.bucketId,
      object: { id: row.id, key: row.key, kind: row.kind, size: row.size, etag: row.etag },
    });
  });
  deps.jobs.kick();
  return loadMediaView(deps, caller, id);
}

/**
 * Removes a deleted object for good now rather than at the end of retention: its bytes (unless
 * a newer upload holds the key), derivatives and record. The purge job is queued in the same
 * transaction, so a failure part-way is finished by the worker.
 */
export async function purgeTrashed(deps: Deps, caller: Caller, id: string): Promise<Purged> {
  await deps.db.transaction(async (tx) => {
    const { row } = await resolveTrashed(tx, deps, caller, id, true);
    await tx.update(mediaObjects).set({ purgeQueuedAt: deps.clock.now() }).where(eq(mediaObjects.id, row.id));
    await enqueueJob(tx, "media.purge", { orgId: caller.orgId, objectId: row.id });
  });
  await purgeObject(deps, id);
  deps.jobs.kick();
  return { id, purged: true };
}
