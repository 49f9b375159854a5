import { and, asc, count, eq, gt } from "drizzle-orm";
import { type BulkOutcome, type BulkResult, type MediaKind } from "../../contract/media.ts";
import { categories, mediaObjects, objectCategories, objectTags, tags } from "../../db/schema/index.ts";
import type { Db } from "../../db/client.ts";
import type { Caller } from "../access/caller.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import type { Deps } from "../core/deps.ts";
import { AppError, errors } from "../core/errors.ts";
import { announceUpdated } from "../events/object-events.ts";
import { MAX_CATEGORIES_PER_OBJECT } from "../labels/categories.ts";
import { categoryKind, tagKind } from "../labels/kinds.ts";
import { replaceObjectLabels } from "../labels/labels.ts";
import { findLabels, labelSlugs, UUID } from "../labels/refs.ts";
import { ensureTagsByName, MAX_TAGS_PER_OBJECT } from "../labels/tags.ts";
import { touchSearch } from "../search/index-rows.ts";
import { deleteMedia } from "./media.ts";
import { moveOne } from "./move.ts";
import { objectConditions } from "./object-filters.ts";
import { resolveLiveObject } from "./object-refs.ts";
import { objectKeyProblem } from "./storage-keys.ts";

/**
 * Bulk calls: one change applied to many objects, each object in a transaction of its own, so
 * each is changed wholly or not at all and the answer says which. The selection is a list of
 * ids, or a filter (media_list's meaning) walked in id order: a call reaches at most `limit`
 * of its objects and answers a cursor for the rest. Ids never change, so the walk neither
 * skips nor repeats an object when the change takes objects out of the filter (a delete, a
 * move, a tag removed).
 */

export interface BulkFilter {
  bucketId?: string | undefined;
  kind?: MediaKind | undefined;
  search?: string | undefined;
  prefix?: string | undefined;
  tags?: string | undefined;
  categories?: string | undefined;
}

export interface BulkSelection {
  ids?: string[] | undefined;
  filter?: BulkFilter | undefined;
  cursor?: string | undefined;
  limit: number;
  /** Told before each object: keeps a long call's connection open, and reports progress (MCP). */
  onObject?: ((done: number, total: number) => void) | undefined;
}

export interface BulkChanges {
  addTags?: string[] | undefined;
  removeTags?: string[] | undefined;
  setCategories?: string[] | undefined;
  addCategories?: string[] | undefined;
  moveTo?: { prefix?: string | undefined; bucketId?: string | undefined } | undefined;
}

/** The ids this call reaches and how many of the filter remain after them. */
async function select(deps: Deps, caller: Caller, s: BulkSelection): Promise<{ ids: string[]; remaining: number; cursor: string | null }> {
  if (s.ids && s.filter) throw errors.validation([{ path: "ids", message: "Send either ids or filter, not both" }]);
  if (s.ids) {
    if (s.cursor) throw errors.validation([{ path: "cursor", message: "A cursor continues a filter; ids are done in one call" }]);
    return { ids: [...new Set(s.ids.map((id) => id.toLowerCase()))], remaining: 0, cursor: null };
  }
  if (!s.filter) throw errors.validation([{ path: "ids", message: "Send ids, or a filter (an empty filter {} selects every object)" }]);
  const f = s.filter;
  // As media_list filters: every tag given, and each category or below it.
  const where = await objectConditions(deps, caller, {
    bucketId: f.bucketId,
    kind: f.kind,
    search: f.search,
    prefix: f.prefix,
    tagSlugs: await labelSlugs(deps.db, tags, caller.orgId, f.tags),
    categorySlugs: await labelSlugs(deps.db, categories, caller.orgId, f.categories),
  });
  if (s.cursor) {
    if (!UUID.test(s.cursor)) throw errors.validation([{ path: "cursor", message: "Not a cursor this service gave out" }]);
    where.push(gt(mediaObjects.id, s.cursor));
  }
  const rows = await deps.db
    .select({ id: mediaObjects.id })
    .from(mediaObjects)
    .where(and(...where))
    .orderBy(asc(mediaObjects.id))
    .limit(s.limit);
  const ids = rows.map((r) => r.id);
  const last = ids.at(-1);
  if (!last || ids.length < s.limit) return { ids, remaining: 0, cursor: null };
  const [{ n } = { n: 0 }] = await deps.db
    .select({ n: count() })
    .from(mediaObjects)
    .where(and(...where, gt(mediaObjects.id, last)));
  return { ids, remaining: n, cursor: n > 0 ? last : null };
}

/** Runs `each` on every selected object, an error becoming that object's outcome. */
async function forEach(deps: Deps, caller: Caller, s: BulkSelection, each: (id: string) => Promise<string | undefined>): Promise<BulkResult> {
  const { ids, remaining, cursor } = await select(deps, caller, s);
  const results: BulkOutcome[] = [];
  for (const [i, id] of ids.entries()) {
    s.onObject?.(i, ids.length);
    try {
      const key = await each(id);
      results.push({ id, status: "done", ...(key !== undefined ? { key } : {}) });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      results.push(err.code === "not_found" ? { id, status: "not_found", code: err.code, message: err.message } : { id, status: "refused", code: err.code, message: err.message });
    }
  }
  deps.jobs.kick();
  const done = results.filter((r) => r.status === "done").length;
  return { results, done, failed: results.length - done, remaining, cursor };
}

export function bulkDelete(deps: Deps, caller: Caller, s: BulkSelection): Promise<BulkResult> {
  return forEach(deps, caller, s, async (id) => {
    await deleteMedia(deps, caller, id);
    return undefined;
  });
}

/**
 * Labels first named once for the whole call (tags to add created, as objects_set_tags' add
 * does; a category that does not exist is a 404 before anything changes), then per object the
 * labels, in the transaction that moves it when it moves: a refused move (a key taken) or a
 * refused label change (too many tags) leaves the object as it was.
 */
export async function bulkUpdate(deps: Deps, caller: Caller, s: BulkSelection, c: BulkChanges): Promise<BulkResult> {
  const { addTags = [], removeTags = [], setCategories, addCategories = [], moveTo } = c;
  if (!addTags.length && !removeTags.length && setCategories === undefined && !addCategories.length && !moveTo) {
    throw errors.validation([{ path: "addTags", message: "Nothing to change: send addTags, removeTags, setCategories, addCategories or moveTo" }]);
  }
  if (setCategories !== undefined && addCategories.length) throw errors.validation([{ path: "addCategories", message: "Send either setCategories or addCategories, not both" }]);
  if (moveTo && moveTo.prefix === undefined && moveTo.bucketId === undefined) throw errors.validation([{ path: "moveTo", message: "Send a prefix, a bucketId or both" }]);
  if (moveTo?.prefix) {
    // A prefix no key may start with would refuse every object alike: refused once, up front.
    const problem = objectKeyProblem(`${moveTo.prefix}x`);
    if (problem) throw errors.validation([{ path: "moveTo.prefix", message: `Keys under this prefix ${problem}` }]);
  }
  if (moveTo?.bucketId) await resolveBucket(deps, caller, moveTo.bucketId);

  const removeTagIds = new Set([...(await findLabels(deps.db, tags, caller.orgId, removeTags)).values()].map((t) => t.id));
  const foundTags = await findLabels(deps.db, tags, caller.orgId, addTags);
  addTags.forEach((ref, i) => {
    if (!foundTags.has(ref) && UUID.test(ref)) throw errors.validation([{ path: `addTags.${i}`, message: `No tag has the id ${ref}; send a tag's id, slug or name (a new name creates the tag)` }]);
  });
  const newNames = addTags.filter((ref) => !foundTags.has(ref));
  const created = newNames.length ? await deps.db.transaction((tx) => ensureTagsByName(tx, caller.orgId, newNames)) : [];
  const addTagIds = [...[...foundTags.values()].map((t) => t.id), ...created].filter((id) => !removeTagIds.has(id));
  const categoryRefs = setCategories ?? addCategories;
  const foundCategories = await findLabels(deps.db, categories, caller.orgId, categoryRefs);
  const missing = categoryRefs.filter((ref) => !foundCategories.has(ref));
  if (missing.length) throw new AppError("not_found", `No category is named ${missing.map((m) => JSON.stringify(m)).join(", ")}`, { missing });
  const categoryIds = [...new Set(categoryRefs.map((ref) => foundCategories.get(ref)!.id))];
  const labelsChange = addTagIds.length > 0 || removeTagIds.size > 0 || categoryRefs.length > 0 || setCategories !== undefined;
  const change = { addTagIds, removeTagIds, categoryIds, replaceCategories: setCategories !== undefined };

  return forEach(deps, caller, s, async (id) => {
    if (moveTo) {
      const obj = await resolveLiveObject(deps.db, caller, id);
      const name = obj.key.slice(obj.key.lastIndexOf("/") + 1);
      const target = moveTo.prefix !== undefined ? `${moveTo.prefix}${name}` : obj.key;
      const problem = objectKeyProblem(target);
      if (problem) throw errors.validation([{ path: "moveTo.prefix", message: `The new key ${problem}` }]);
      const labels = labelsChange ? (tx: Db) => relabel(tx, deps, caller, id, change) : undefined;
      const moved = await moveOne(deps, caller, id, { key: target, bucketId: moveTo.bucketId, alsoInTx: labels });
      // An object already where it goes was not moved, so nothing ran its labels.
      if (labels && moved === obj.key && (moveTo.bucketId ?? obj.bucketId) === obj.bucketId) await deps.db.transaction(labels);
      return moved;
    }
    await deps.db.transaction((tx) => relabel(tx, deps, caller, id, change));
    return undefined;
  });
}

/**
 * One object's tags and categories changed in the caller's transaction (its own, or the one
 * that moves the object), under the object's lock as objects_set_tags takes it.
 */
async function relabel(
  tx: Db,
  deps: Deps,
  caller: Caller,
  id: string,
  c: { addTagIds: string[]; removeTagIds: Set<string>; categoryIds: string[]; replaceCategories: boolean },
): Promise<void> {
  await resolveLiveObject(tx, caller, id, { lock: true });
  const changed: ("tags" | "categories")[] = [];
  if (c.addTagIds.length || c.removeTagIds.size) {
    const current = (await tx.select({ id: objectTags.tagId }).from(objectTags).where(eq(objectTags.objectId, id))).map((r) => r.id);
    const next = [...new Set([...current.filter((t) => !c.removeTagIds.has(t)), ...c.addTagIds])];
    if (next.length > MAX_TAGS_PER_OBJECT) throw errors.validation([{ path: "addTags", message: `An object carries at most ${MAX_TAGS_PER_OBJECT} tags; this would make ${next.length}` }]);
    await replaceObjectLabels(tx, tagKind, caller.orgId, id, next);
    changed.push("tags");
  }
  if (c.replaceCategories || c.categoryIds.length) {
    const current = c.replaceCategories
      ? []
      : (await tx.select({ id: objectCategories.categoryId }).from(objectCategories).where(eq(objectCategories.objectId, id))).map((r) => r.id);
    const next = [...new Set([...current, ...c.categoryIds])];
    if (next.length > MAX_CATEGORIES_PER_OBJECT) {
      throw errors.validation([{ path: "addCategories", message: `An object is in at most ${MAX_CATEGORIES_PER_OBJECT} categories; this would make ${next.length}` }]);
    }
    await replaceObjectLabels(tx, categoryKind, caller.orgId, id, next);
    changed.push("categories");
  }
  if (changed.length === 0) return;
  await touchSearch(tx, deps, caller.orgId, [id]);
  await announceUpdated(tx, caller.orgId, [id], changed, deps.clock.now());
}
