import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { categories, objectCategories, objectTags, tags } from "../db/schema/index.ts";
import { prepared } from "./prepared.ts";

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
  // One object (the media view of GET /media/{id}) is the hot case: its queries are prepared.
  if (ids.length === 1) {
    const one = { orgId, id: ids[0]! };
    const [tagRows, categoryRows] = await Promise.all([
      prepared(db, "object_tags", (d) => tagQuery(d, sql.placeholder("orgId"), [sql.placeholder("id")]).prepare("object_tags")).execute(one),
      prepared(db, "object_categories", (d) => categoryQuery(d, sql.placeholder("orgId"), [sql.placeholder("id")]).prepare("object_categories")).execute(one),
    ]);
    return collect(out, tagRows, categoryRows);
  }
  const [tagRows, categoryRows] = await Promise.all([tagQuery(db, orgId, ids), categoryQuery(db, orgId, ids)]);
  return collect(out, tagRows, categoryRows);
}

type Param = string | ReturnType<typeof sql.placeholder>;

function tagQuery(db: Db, orgId: Param, ids: Param[]) {
  return db
    .select({ objectId: objectTags.objectId, id: tags.id, name: tags.name, slug: tags.slug })
    .from(objectTags)
    .innerJoin(tags, eq(tags.id, objectTags.tagId))
    .where(and(eq(objectTags.orgId, orgId), eq(tags.orgId, orgId), inArray(objectTags.objectId, ids)))
    .orderBy(asc(tags.slug));
}

function categoryQuery(db: Db, orgId: Param, ids: Param[]) {
  return db
    .select({ objectId: objectCategories.objectId, id: categories.id, name: categories.name, slug: categories.slug })
    .from(objectCategories)
    .innerJoin(categories, eq(categories.id, objectCategories.categoryId))
    .where(and(eq(objectCategories.orgId, orgId), eq(categories.orgId, orgId), inArray(objectCategories.objectId, ids)))
    .orderBy(asc(categories.slug));
}

function collect(out: Map<string, ObjectLabels>, tagRows: ({ objectId: string } & Label)[], categoryRows: ({ objectId: string } & Label)[]) {
  for (const { objectId, ...label } of tagRows) out.get(objectId)?.tags.push(label);
  for (const { objectId, ...label } of categoryRows) out.get(objectId)?.categories.push(label);
  return out;
}
