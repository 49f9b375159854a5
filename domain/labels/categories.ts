import { and, asc, count, eq, inArray, like, notInArray, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { categories, mediaObjects, objectCategories } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { AppError, errors } from "../core/errors.ts";
import { type Label, labelsFor } from "./object-labels.ts";
import { countedObjects, resolveLiveObject } from "../media/object-refs.ts";
import { announceUpdated } from "../events/object-events.ts";
import { touchSearch } from "../search/index-rows.ts";
import type { Page } from "../core/pagination.ts";
import { escapeLike } from "./slug.ts";
import { slugOrThrow } from "./tags.ts";

export const MAX_CATEGORY_NAME = 128;
/** Most categories one object can be in (ours). */
export const MAX_CATEGORIES_PER_OBJECT = 100;

export interface CategoryView {
  id: string;
  name: string;
  slug: string;
  parentId: string | null;
  createdAt: string;
}

export interface CategoryNode extends CategoryView {
  objectCount: number;
  children: CategoryNode[];
}

type CategoryRow = typeof categories.$inferSelect;

const view = (c: CategoryRow): CategoryView => ({
  id: c.id,
  name: c.name,
  slug: c.slug,
  parentId: c.parentId,
  createdAt: c.createdAt.toISOString(),
});

/**
 * The organization's whole tree: `data` holds the root nodes, each with its `children`
 * nested, siblings ordered by name. `total` counts every node. Not paginated (`hasMore` is
 * always false): a tree cut into pages would lose its shape.
 */
export async function listCategoryTree(deps: Deps, caller: Caller): Promise<Page<CategoryNode>> {
  const rows = await deps.db
    .select({ category: categories, objectCount: count(mediaObjects.id) })
    .from(categories)
    .leftJoin(objectCategories, and(eq(objectCategories.categoryId, categories.id), eq(objectCategories.orgId, caller.orgId)))
    .leftJoin(mediaObjects, countedObjects(caller, objectCategories.objectId))
    .where(eq(categories.orgId, caller.orgId))
    .groupBy(categories.id)
    .orderBy(asc(categories.name), asc(categories.slug));
  const nodes = new Map<string, CategoryNode>();
  for (const r of rows) nodes.set(r.category.id, { ...view(r.category), objectCount: r.objectCount, children: [] });
  const roots: CategoryNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.parentId ? nodes.get(node.parentId) : undefined;
    (parent ? parent.children : roots).push(node);
  }
  return { data: roots, total: nodes.size, hasMore: false };
}

/**
 * A new node under `parentId` (same organization, else 404) or at the root. Nodes never move,
 * so no cycle can form. Slugs are unique per organization: a name whose slug is taken gets
 * the first free "-2", "-3", ... suffix (siblings may share a name; their slugs differ).
 */
export async function createCategory(
  deps: Deps,
  caller: Caller,
  input: { name: string; parentId?: string | undefined },
): Promise<CategoryView> {
  const base = slugOrThrow(input.name, "name");
  return deps.db.transaction(async (tx) => {
    if (input.parentId) {
      // Shared lock: the parent cannot be deleted before this node is committed under it.
      const [parent] = await tx
        .select({ id: categories.id })
        .from(categories)
        .where(and(eq(categories.id, input.parentId), eq(categories.orgId, caller.orgId)))
        .for("share");
      if (!parent) throw errors.notFound("Parent category");
    }
    // Creates of one name wait for each other, so each sees the slugs the others took. A
    // different name can still land on the same suffixed slug; the insert then finds it taken.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`categories:${caller.orgId}:${base}`}, 0))`);
    for (let attempt = 0; attempt < 5; attempt++) {
      const taken = await tx
        .select({ slug: categories.slug })
        .from(categories)
        .where(and(eq(categories.orgId, caller.orgId), or(eq(categories.slug, base), like(categories.slug, `${escapeLike(base)}-%`))));
      const slug = firstFreeSlug(base, new Set(taken.map((t) => t.slug)));
      const [row] = await tx
        .insert(categories)
        .values({ orgId: caller.orgId, parentId: input.parentId ?? null, name: input.name, slug, createdAt: deps.clock.now() })
        // A concurrent create took the slug: look again.
        .onConflictDoNothing({ target: [categories.orgId, categories.slug] })
        .returning();
      if (row) return view(row);
    }
    throw errors.conflict("Categories with this name are being created concurrently; retry");
  });
}

function firstFreeSlug(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/**
 * Spec §4.4: the children move to the root and the object assignments go, in one
 * transaction. Categories span buckets: the tool's reach is the organization.
 */
export async function deleteCategory(
  deps: Deps,
  caller: Caller,
  id: string,
): Promise<{ id: string; deleted: true; childrenMovedToRoot: number; unassignedObjects: number }> {
  const result = await deps.db.transaction(async (tx) => {
    const [category] = await tx
      .select({ id: categories.id })
      .from(categories)
      .where(and(eq(categories.id, id), eq(categories.orgId, caller.orgId)))
      .for("update");
    if (!category) throw errors.notFound("Category");
    const moved = await tx
      .update(categories)
      .set({ parentId: null })
      .where(and(eq(categories.parentId, id), eq(categories.orgId, caller.orgId)))
      .returning({ id: categories.id });
    const removed = await tx
      .delete(objectCategories)
      .where(and(eq(objectCategories.categoryId, id), eq(objectCategories.orgId, caller.orgId)))
      .returning({ objectId: objectCategories.objectId });
    await tx.delete(categories).where(and(eq(categories.id, id), eq(categories.orgId, caller.orgId)));
    await touchSearch(tx, deps, caller.orgId, removed.map((r) => r.objectId));
    // Every object that carried it changed: one media.updated each.
    await announceUpdated(tx, caller.orgId, removed.map((r) => r.objectId), ["categories"], deps.clock.now());
    return { id, deleted: true as const, childrenMovedToRoot: moved.length, unassignedObjects: removed.length };
  });
  deps.jobs.kick();
  return result;
}

/** `PUT /api/objects/{id}/categories`: the object's categories become exactly `categoryIds`, all or nothing. */
export async function setObjectCategories(
  deps: Deps,
  caller: Caller,
  objectId: string,
  categoryIds: string[],
): Promise<{ objectId: string; categories: Label[] }> {
  const result = await deps.db.transaction(async (tx) => {
    await resolveLiveObject(tx, caller, objectId, { lock: true });
    await replaceObjectCategories(tx, caller.orgId, objectId, categoryIds);
    await touchSearch(tx, deps, caller.orgId, [objectId]);
    await announceUpdated(tx, caller.orgId, [objectId], ["categories"], deps.clock.now());
    const labels = await labelsFor(tx, caller.orgId, [objectId]);
    return { objectId, categories: labels.get(objectId)!.categories };
  });
  deps.jobs.kick();
  return result;
}

/**
 * Replaces an object's categories (duplicates ignored). Every id must be a category of the
 * organization, else 404 with `details.missingIds` and nothing changes. Run it inside the
 * transaction that created or locked the object.
 */
export async function replaceObjectCategories(tx: Db, orgId: string, objectId: string, categoryIds: string[]): Promise<void> {
  const wanted = [...new Set(categoryIds)];
  if (wanted.length > 0) {
    const found = await tx
      .select({ id: categories.id })
      .from(categories)
      .where(and(eq(categories.orgId, orgId), inArray(categories.id, wanted)))
      .for("key share");
    const foundIds = new Set(found.map((c) => c.id));
    const missingIds = wanted.filter((id) => !foundIds.has(id));
    if (missingIds.length > 0) {
      throw new AppError("not_found", `Category not found: ${missingIds.join(", ")}`, { missingIds });
    }
  }
  const mine = and(eq(objectCategories.objectId, objectId), eq(objectCategories.orgId, orgId));
  await tx.delete(objectCategories).where(wanted.length > 0 ? and(mine, notInArray(objectCategories.categoryId, wanted)) : mine);
  if (wanted.length > 0) {
    await tx
      .insert(objectCategories)
      .values(wanted.map((categoryId) => ({ orgId, objectId, categoryId })))
      .onConflictDoNothing();
  }
}
