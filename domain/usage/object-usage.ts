import type { ObjectRemoved, ObjectRestored, ObjectStored } from "../media/lifecycle.ts";
import { appendStorageDelta, foldStorage, nearLimit } from "./storage-deltas.ts";
import { recordUsageEvent } from "./events.ts";

/**
 * A recorded object counts its bytes (the difference, for an overwrite), gives back what its
 * upload reserved, and leaves a ledger entry. Appended as a delta unless it brings the
 * organization near a line where something must happen at once (nearLimit).
 */
export async function countStoredObject(e: ObjectStored): Promise<void> {
  const delta = e.object.size - (e.previous?.size ?? 0);
  const change = { bytes: delta, reserved: -e.released, objects: e.previous ? 0 : 1, bucketId: e.bucketId };
  if (await nearLimit(e.tx, e.orgId, delta)) await foldStorage(e.tx, e.orgId, e.at, change);
  else await appendStorageDelta(e.tx, e.orgId, change, e.at);
  await recordUsageEvent(e.tx, e.orgId, {
    type: "upload_confirmed",
    at: e.at,
    objectId: e.object.id,
    bucketId: e.bucketId,
    key: e.object.key,
    bytes: e.object.size,
    delta,
    details: e.previous ? { overwrite: true, previousSize: e.previous.size } : {},
  });
}

/**
 * A soft delete stops counting the object at once; the purge only notes in the ledger when
 * the bytes went (usage already dropped at the delete).
 */
export async function countRemovedObject(e: ObjectRemoved): Promise<void> {
  const { id, key, size } = e.object;
  if (e.how === "deleted") {
    await appendStorageDelta(e.tx, e.orgId, { bytes: -size, objects: -1, bucketId: e.bucketId }, e.at);
    await recordUsageEvent(e.tx, e.orgId, { type: "object_deleted", at: e.at, objectId: id, bucketId: e.bucketId, key, bytes: size, delta: -size });
  } else {
    await recordUsageEvent(e.tx, e.orgId, { type: "object_purged", at: e.at, objectId: id, bucketId: e.bucketId, key, bytes: size, delta: 0 });
  }
}

/**
 * A restored object counts again, as if it had just been stored; folded under the lock, as
 * the restore checked the quota with the usage row locked.
 */
export async function countRestoredObject(e: ObjectRestored): Promise<void> {
  const { id, key, size } = e.object;
  await foldStorage(e.tx, e.orgId, e.at, { bytes: size, objects: 1, bucketId: e.bucketId });
  await recordUsageEvent(e.tx, e.orgId, { type: "object_restored", at: e.at, objectId: id, bucketId: e.bucketId, key, bytes: size, delta: size });
}
