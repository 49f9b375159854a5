import type { ObjectRemoved, ObjectRestored, ObjectStored } from "../media/lifecycle.ts";
import { addStored } from "./counters.ts";
import { recordUsageEvent } from "./events.ts";

/** A recorded object counts its bytes (the difference, for an overwrite) and leaves a ledger entry. */
export async function countStoredObject(e: ObjectStored): Promise<void> {
  const delta = e.object.size - (e.previous?.size ?? 0);
  await addStored(e.tx, e.orgId, { bytes: delta, objects: e.previous ? 0 : 1, bucketId: e.bucketId }, e.at);
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
    await addStored(e.tx, e.orgId, { bytes: -size, objects: -1, bucketId: e.bucketId }, e.at);
    await recordUsageEvent(e.tx, e.orgId, { type: "object_deleted", at: e.at, objectId: id, bucketId: e.bucketId, key, bytes: size, delta: -size });
  } else {
    await recordUsageEvent(e.tx, e.orgId, { type: "object_purged", at: e.at, objectId: id, bucketId: e.bucketId, key, bytes: size, delta: 0 });
  }
}

/** A restored object counts again, as if it had just been stored (the restore checked the quota first). */
export async function countRestoredObject(e: ObjectRestored): Promise<void> {
  const { id, key, size } = e.object;
  await addStored(e.tx, e.orgId, { bytes: size, objects: 1, bucketId: e.bucketId }, e.at);
  await recordUsageEvent(e.tx, e.orgId, { type: "object_restored", at: e.at, objectId: id, bucketId: e.bucketId, key, bytes: size, delta: size });
}
