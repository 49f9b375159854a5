import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { mediaObjects } from "../../db/schema/index.ts";
import type { EventData } from "../../contract/events.ts";
import type { ObjectRemoved, ObjectRestored, ObjectStored } from "../media/lifecycle.ts";
import { restorableUntil } from "../media/retention.ts";
import { emitEvent } from "./emit.ts";

/** Object lifecycle hooks (media/object-hooks.ts) that tell webhook endpoints, in the change's transaction. */

/** A new object is media.created; new bytes at an existing object's key are media.updated (content). */
export async function announceStored(e: ObjectStored): Promise<void> {
  const ref = { objectId: e.object.id, bucketId: e.bucketId, key: e.object.key };
  if (e.previous) await emitEvent(e.tx, { orgId: e.orgId, type: "media.updated", at: e.at, data: { ...ref, changes: ["content"] } });
  else await emitEvent(e.tx, { orgId: e.orgId, type: "media.created", at: e.at, data: { ...ref, kind: e.object.kind, size: e.object.size } });
}

export async function announceRemoved(e: ObjectRemoved): Promise<void> {
  const ref = { objectId: e.object.id, bucketId: e.bucketId, key: e.object.key };
  if (e.how === "deleted") {
    await emitEvent(e.tx, { orgId: e.orgId, type: "media.deleted", at: e.at, data: { ...ref, restorableUntil: restorableUntil(e.at).toISOString() } });
  } else {
    await emitEvent(e.tx, { orgId: e.orgId, type: "media.purged", at: e.at, data: ref });
  }
}

export async function announceRestored(e: ObjectRestored): Promise<void> {
  await emitEvent(e.tx, { orgId: e.orgId, type: "media.restored", at: e.at, data: { objectId: e.object.id, bucketId: e.bucketId, key: e.object.key } });
}

type Change = EventData<"media.updated">["changes"][number];

/**
 * media.updated for live objects whose metadata or labels changed (one event per object), in
 * the transaction that changed them. Returns the deliveries written: kick the jobs after commit.
 */
export async function announceUpdated(tx: Db, orgId: string, objectIds: readonly string[], changes: Change[], at: Date): Promise<number> {
  const ids = [...new Set(objectIds)];
  if (ids.length === 0) return 0;
  const rows = await tx
    .select({ id: mediaObjects.id, bucketId: mediaObjects.bucketId, key: mediaObjects.key })
    .from(mediaObjects)
    .where(and(eq(mediaObjects.orgId, orgId), inArray(mediaObjects.id, ids), isNull(mediaObjects.deletedAt)));
  return emitEvent(tx, { orgId, type: "media.updated", at, data: rows.map((r) => ({ objectId: r.id, bucketId: r.bucketId, key: r.key, changes })) });
}
