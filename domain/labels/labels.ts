import { and, eq, inArray, notInArray } from "drizzle-orm";
import type { Deleted } from "../../contract/common.ts";
import type { Label } from "../../contract/labels.ts";
import type { Db } from "../../db/client.ts";
import { mediaObjects } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { AppError, errors } from "../core/errors.ts";
import { announceUpdated } from "../events/object-events.ts";
import { resolveLiveObject } from "../media/object-refs.ts";
import { touchSearch } from "../search/index-rows.ts";
import type { LabelKind } from "./kinds.ts";
import { labelsFor } from "./object-labels.ts";

/**
 * Deletes a label and takes it off every object, in one transaction; `alsoRemoving` runs in
 * that transaction after the label is locked (categories move their children to the root).
 * Labels span buckets: the tools that delete them reach the whole organization.
 */
export async function deleteLabel<E extends Record<string, number>>(
  deps: Deps,
  caller: Caller,
  kind: LabelKind,
  id: string,
  alsoRemoving?: (tx: Db) => Promise<E>,
): Promise<Deleted & E & { unassignedObjects: number }> {
  const { labels, links } = kind;
  const result = await deps.db.transaction(async (tx) => {
    // The objects carrying it are locked first, in id order, as setting an object's labels
    // locks the object before its labels: taken the other way round, a concurrent
    // setObjectLabels holding one of them and waiting on this label would deadlock with it.
    await tx
      .select({ id: mediaObjects.id })
      .from(mediaObjects)
      .where(and(eq(mediaObjects.orgId, caller.orgId), inArray(mediaObjects.id, tx.select({ id: links.objectId }).from(links).where(eq(kind.labelId, id)))))
      .orderBy(mediaObjects.id)
      .for("update");
    const [label] = await tx
      .select({ id: labels.id })
      .from(labels)
      .where(and(eq(labels.id, id), eq(labels.orgId, caller.orgId)))
      .for("update");
    if (!label) throw errors.notFound(kind.noun);
    const extra = alsoRemoving ? await alsoRemoving(tx) : ({} as E);
    const removed = await tx
      .delete(links)
      .where(and(eq(kind.labelId, id), eq(links.orgId, caller.orgId)))
      .returning({ objectId: links.objectId });
    await tx.delete(labels).where(and(eq(labels.id, id), eq(labels.orgId, caller.orgId)));
    // The objects' `labels` followed the links' deletion (the database's triggers, object-labels.ts).
    const objectIds = removed.map((r) => r.objectId);
    await touchSearch(tx, deps, caller.orgId, objectIds);
    // Every object that carried it changed: one media.updated each.
    await announceUpdated(tx, caller.orgId, objectIds, [kind.key], deps.clock.now());
    return { id, deleted: true as const, ...extra, unassignedObjects: removed.length };
  });
  deps.jobs.kick();
  return result;
}

/** `PUT /api/objects/{id}/<kind>`: the object's labels of this kind become exactly `ids`, all or nothing. */
export async function setObjectLabels<K extends "tags" | "categories">(
  deps: Deps,
  caller: Caller,
  kind: LabelKind<K>,
  objectId: string,
  ids: string[],
): Promise<{ objectId: string } & Record<K, Label[]>> {
  const result = await deps.db.transaction(async (tx) => {
    await resolveLiveObject(tx, caller, objectId, { lock: true });
    await replaceObjectLabels(tx, kind, caller.orgId, objectId, ids);
    await touchSearch(tx, deps, caller.orgId, [objectId]);
    await announceUpdated(tx, caller.orgId, [objectId], [kind.key], deps.clock.now());
    const labels = await labelsFor(tx, caller.orgId, [objectId]);
    return { objectId, [kind.key]: labels.get(objectId)![kind.key] } as { objectId: string } & Record<K, Label[]>;
  });
  deps.jobs.kick();
  return result;
}

/**
 * Replaces an object's labels of this kind (duplicates ignored). Every id must be a label of
 * the organization, else 404 with `details.missingIds` and nothing changes: run it inside the
 * transaction that created or locked the object.
 */
export async function replaceObjectLabels(tx: Db, kind: LabelKind, orgId: string, objectId: string, ids: string[]): Promise<void> {
  const { labels, links } = kind;
  const wanted = [...new Set(ids)];
  if (wanted.length > 0) {
    // Key-share locks keep the labels from being deleted before this transaction commits.
    const found = await tx
      .select({ id: labels.id })
      .from(labels)
      .where(and(eq(labels.orgId, orgId), inArray(labels.id, wanted)))
      .for("key share");
    const foundIds = new Set(found.map((l) => l.id));
    const missingIds = wanted.filter((id) => !foundIds.has(id));
    if (missingIds.length > 0) {
      throw new AppError("not_found", `${kind.noun} not found: ${missingIds.join(", ")}`, { missingIds });
    }
  }
  const mine = and(eq(links.objectId, objectId), eq(links.orgId, orgId));
  await tx.delete(links).where(wanted.length > 0 ? and(mine, notInArray(kind.labelId, wanted)) : mine);
  if (wanted.length > 0) {
    await tx
      .insert(links)
      .values(wanted.map((labelId) => kind.link(orgId, objectId, labelId)))
      .onConflictDoNothing();
  }
  // The object's `labels` follow its links: the database's triggers rewrite them (object-labels.ts).
}
