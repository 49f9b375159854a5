import { and, eq } from "drizzle-orm";
import type { Label } from "../../contract/labels.ts";
import { objectTags, tags } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { announceUpdated } from "../events/object-events.ts";
import { resolveLiveObject } from "../media/object-refs.ts";
import { touchSearch } from "../search/index-rows.ts";
import { tagKind } from "./kinds.ts";
import { replaceObjectLabels } from "./labels.ts";
import { labelsFor } from "./object-labels.ts";
import { findLabels, UUID } from "./refs.ts";
import { ensureTagsByName, MAX_TAGS_PER_OBJECT } from "./tags.ts";

/**
 * One call that adds and removes an object's tags, each named as filters name them (id, slug or
 * name: domain/labels/refs.ts); a name to add that no tag has yet becomes a tag, as upload
 * labels do. Removing a tag the object does not carry, or one that does not exist, changes
 * nothing, so a repeat succeeds with the same effect. Same transaction and locks as setting
 * the whole list.
 */
export async function changeObjectTags(
  deps: Deps,
  caller: Caller,
  objectId: string,
  change: { add: string[]; remove: string[] },
): Promise<{ objectId: string; tags: Label[] }> {
  const result = await deps.db.transaction(async (tx) => {
    await resolveLiveObject(tx, caller, objectId, { lock: true });
    const current = (await tx.select({ id: objectTags.tagId }).from(objectTags).where(and(eq(objectTags.objectId, objectId), eq(objectTags.orgId, caller.orgId)))).map((r) => r.id);
    const removeIds = new Set([...(await findLabels(tx, tags, caller.orgId, change.remove)).values()].map((t) => t.id));
    // An id to add must name a tag; anything else is a name (created when new).
    const existing = await findLabels(tx, tags, caller.orgId, change.add);
    const addIds: string[] = [];
    const newNames: string[] = [];
    change.add.forEach((ref, i) => {
      const hit = existing.get(ref);
      if (hit) addIds.push(hit.id);
      else if (UUID.test(ref)) throw errors.validation([{ path: `add.${i}`, message: `No tag has the id ${ref}; send a tag's id, slug or name (a new name creates the tag)` }]);
      else newNames.push(ref);
    });
    addIds.push(...(await ensureTagsByName(tx, caller.orgId, newNames)));
    const next = [...new Set([...current.filter((id) => !removeIds.has(id)), ...addIds.filter((id) => !removeIds.has(id))])];
    if (next.length > MAX_TAGS_PER_OBJECT) throw errors.validation([{ path: "add", message: `An object carries at most ${MAX_TAGS_PER_OBJECT} tags; this would make ${next.length}` }]);
    await replaceObjectLabels(tx, tagKind, caller.orgId, objectId, next);
    await touchSearch(tx, deps, caller.orgId, [objectId]);
    await announceUpdated(tx, caller.orgId, [objectId], ["tags"], deps.clock.now());
    return { objectId, tags: (await labelsFor(tx, caller.orgId, [objectId])).get(objectId)!.tags };
  });
  deps.jobs.kick();
  return result;
}
