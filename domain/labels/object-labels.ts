import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { categories, objectCategories, objectTags, tags } from "../../db/schema/index.ts";
import { anyId, prepared } from "../core/prepared.ts";
import type { Label } from "../../contract/labels.ts";

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
  // Prepared (see prepared.ts), with the ids as one parameter, so the text is the same for
  // any number of objects: building a 50-value IN list was most of a listing's own CPU.
  const params = { orgId, ids: ids.join(",") };
  const [tagRows, categoryRows] = await Promise.all([
    prepared(db, "object_tags", (d) =>
      d
        .select({ objectId: objectTags.objectId, id: tags.id, name: tags.name, slug: tags.slug })
        .from(objectTags)
        .innerJoin(tags, eq(tags.id, objectTags.tagId))
        .where(and(eq(objectTags.orgId, sql.placeholder("orgId")), eq(tags.orgId, sql.placeholder("orgId")), anyId(objectTags.objectId)))
        .orderBy(asc(tags.slug))
        .prepare("object_tags"),
    ).execute(params),
    prepared(db, "object_categories", (d) =>
      d
        .select({ objectId: objectCategories.objectId, id: categories.id, name: categories.name, slug: categories.slug })
        .from(objectCategories)
        .innerJoin(categories, eq(categories.id, objectCategories.categoryId))
        .where(and(eq(objectCategories.orgId, sql.placeholder("orgId")), eq(categories.orgId, sql.placeholder("orgId")), anyId(objectCategories.objectId)))
        .orderBy(asc(categories.slug))
        .prepare("object_categories"),
    ).execute(params),
  ]);
  for (const { objectId, ...label } of tagRows) out.get(objectId)?.tags.push(label);
  for (const { objectId, ...label } of categoryRows) out.get(objectId)?.categories.push(label);
  return out;
}
