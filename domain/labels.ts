import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { categories, objectCategories, objectTags, tags } from "../db/schema/index.ts";

export interface Label {
  id: string;
  name: string;
  slug: string;
}

export interface ObjectLabels {
  tags: Label[];
  categories: Label[];
}

/**
 * Tags and categories of many media objects at once, for the media object view: one query
 * per kind, whatever the number of objects. Every id asked for has an entry (empty lists
 * when it has no labels). Labels are ordered by slug.
 */
export async function labelsFor(db: Db, orgId: string, objectIds: readonly string[]): Promise<Map<string, ObjectLabels>> {
  const out = new Map<string, ObjectLabels>();
  const ids = [...new Set(objectIds)];
  for (const id of ids) out.set(id, { tags: [], categories: [] });
  if (ids.length === 0) return out;
  const [tagRows, categoryRows] = await Promise.all([
    db
      .select({ objectId: objectTags.objectId, id: tags.id, name: tags.name, slug: tags.slug })
      .from(objectTags)
      .innerJoin(tags, eq(tags.id, objectTags.tagId))
      .where(and(eq(objectTags.orgId, orgId), eq(tags.orgId, orgId), inArray(objectTags.objectId, ids)))
      .orderBy(asc(tags.slug)),
    db
      .select({ objectId: objectCategories.objectId, id: categories.id, name: categories.name, slug: categories.slug })
      .from(objectCategories)
      .innerJoin(categories, eq(categories.id, objectCategories.categoryId))
      .where(and(eq(objectCategories.orgId, orgId), eq(categories.orgId, orgId), inArray(objectCategories.objectId, ids)))
      .orderBy(asc(categories.slug)),
  ]);
  for (const { objectId, ...label } of tagRows) out.get(objectId)?.tags.push(label);
  for (const { objectId, ...label } of categoryRows) out.get(objectId)?.categories.push(label);
  return out;
}
