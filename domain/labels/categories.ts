import { and, asc, count, eq, like, or, sql } from "drizzle-orm";
import type { Category, CategoryDeleted, CategoryNode } from "../../contract/labels.ts";
import { rowsOf } from "../../db/client.ts";
import { categories, mediaObjects, objectCategories } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { categoryKind } from "./kinds.ts";
import { deleteLabel } from "./labels.ts";
import { countedObjects } from "../media/object-refs.ts";
import type { Page } from "../core/pagination.ts";
import { escapeLike, slugOrThrow } from "./slug.ts";

export const MAX_CATEGORY_NAME = 128;
/** Most categories one object can be in (ours). */
export const MAX_CATEGORIES_PER_OBJECT = 100;

type CategoryRow = typeof categories.$inferSelect;

const view = (c: CategoryRow): Category => ({
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
 * A new node under `parentId` (same organization, else 404) or at the root. A new node has
 * no children, so creating one cannot form a cycle (moves check for that). Slugs are unique per organization: a name whose slug is taken gets
 * the first free "-2", "-3", ... suffix (siblings may share a name; their slugs differ).
 */
export async function createCategory(
  deps: Deps,
  caller: Caller,
  input: { name: string; parentId?: string | undefined },
): Promise<Category> {
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

/**
 * Moves a category, with everything below it, under `parentId` (a category of the
 * organization, else 404) or to the root (null). Moving it under itself or under one of its
 * own descendants would make a cycle: 409. Moves of one organization take turns, so two
 * crossing moves (A under B while B goes under A) cannot make one either. Search filters
 * expand a category to its descendants when they run, so nothing needs reindexing.
 */
export async function moveCategory(deps: Deps, caller: Caller, id: string, parentId: string | null): Promise<Category> {
  return deps.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`categories-tree:${caller.orgId}`}, 0))`);
    const [category] = await tx
      .select({ id: categories.id })
      .from(categories)
      .where(and(eq(categories.id, id), eq(categories.orgId, caller.orgId)))
      .for("update");
    if (!category) throw errors.notFound("Category");
    if (parentId !== null) {
      const [parent] = await tx
        .select({ id: categories.id })
        .from(categories)
        .where(and(eq(categories.id, parentId), eq(categories.orgId, caller.orgId)))
        .for("share");
      if (!parent) throw errors.notFound("Parent category");
      const below = rowsOf<{ id: string }>(
        await tx.execute(sql`
          with recursive up as (
            select id, parent_id from categories where id = ${parentId} and org_id = ${caller.orgId}
            union all
            select c.id, c.parent_id from categories c join up on c.id = up.parent_id where c.org_id = ${caller.orgId}
          )
          select id from up where id = ${id} limit 1`),
      );
      if (below.length > 0) throw errors.conflict("A category cannot move under itself or one of its own descendants");
    }
    const [row] = await tx
      .update(categories)
      .set({ parentId })
      .where(and(eq(categories.id, id), eq(categories.orgId, caller.orgId)))
      .returning();
    return view(row!);
  });
}

function firstFreeSlug(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/**
 * Deleting a category moves its children to the root and takes it off every object, in one
 * transaction.
 */
export async function deleteCategory(deps: Deps, caller: Caller, id: string): Promise<CategoryDeleted> {
  return deleteLabel(deps, caller, categoryKind, id, async (tx) => {
    const moved = await tx
      .update(categories)
      .set({ parentId: null })
      .where(and(eq(categories.parentId, id), eq(categories.orgId, caller.orgId)))
      .returning({ id: categories.id });
    return { childrenMovedToRoot: moved.length };
  });
}
