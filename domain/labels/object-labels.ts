import { and, asc, eq, getTableName, type SQL, sql } from "drizzle-orm";
import type { Label } from "../../contract/labels.ts";
import type { Db } from "../../db/client.ts";
import { anyId, prepared } from "../core/prepared.ts";
import { LABEL_KINDS, type LabelKind } from "./kinds.ts";

export type ObjectLabels = Record<LabelKind["key"], Label[]>;

/**
 * Tags and categories of many media objects at once (a labels answer, the Meilisearch sync): one query
 * per kind, whatever the number of objects. Every id asked for has an entry (empty lists
 * when it has no labels). Labels are ordered by slug.
 */
export async function labelsFor(db: Db, orgId: string, objectIds: readonly string[]): Promise<Map<string, ObjectLabels>> {
  const out = new Map<string, ObjectLabels>();
  const ids = [...new Set(objectIds)];
  for (const id of ids) out.set(id, { tags: [], categories: [] });
  if (ids.length === 0) return out;
  const params = { orgId, ids: ids.join(",") };
  const found = await Promise.all(LABEL_KINDS.map((kind) => labelsOfKind(db, kind).execute(params)));
  LABEL_KINDS.forEach((kind, i) => {
    for (const { objectId, ...label } of found[i]!) out.get(objectId)?.[kind.key].push(label);
  });
  return out;
}

/**
 * Prepared (see prepared.ts), with the ids as one parameter, so the text is the same for any
 * number of objects: building a 50-value IN list was most of a listing's own CPU.
 */
function labelsOfKind(db: Db, kind: LabelKind) {
  const { labels, links } = kind;
  return prepared(db, `object_${kind.key}`, (d) =>
    d
      .select({ objectId: links.objectId, id: labels.id, name: labels.name, slug: labels.slug })
      .from(links)
      .innerJoin(labels, eq(labels.id, kind.labelId))
      .where(and(eq(links.orgId, sql.placeholder("orgId")), eq(labels.orgId, sql.placeholder("orgId")), anyId(links.objectId)))
      .orderBy(asc(labels.slug))
      .prepare(`object_${kind.key}`),
  );
}

/**
 * Rewrites `media_objects.labels` (what a view shows of its tags and categories) of the objects
 * `where` selects (over media_objects as `o`), from their links, for the given kinds. Every
 * change of an object's links calls it in the same transaction, with the object locked, so the
 * column never disagrees with the links a committed transaction left.
 */
export async function writeObjectLabels(tx: Db, where: SQL, kinds: readonly LabelKind[] = LABEL_KINDS): Promise<void> {
  const fields = sql.join(
    kinds.map((kind) => sql`${sql.raw(`'${kind.key}'`)}, ${labelsOfObject(kind)}`),
    sql`, `,
  );
  await tx.execute(sql`update media_objects o set labels = o.labels || jsonb_build_object(${fields}) where ${where}`);
}

/** The objects of an organization with these ids, over media_objects as `o` (one parameter, whatever their number). */
export function objectsWithIds(orgId: string, ids: readonly string[]): SQL {
  return sql`o.org_id = ${orgId} and o.id = any(string_to_array(${ids.join(",")}, ',')::uuid[])`;
}

/** An object's labels of one kind as its view shows them, ordered by slug, over media_objects as `o`. */
function labelsOfObject(kind: LabelKind): SQL {
  const links = sql.identifier(getTableName(kind.links));
  const labels = sql.identifier(getTableName(kind.labels));
  return sql`coalesce((
    select jsonb_agg(jsonb_build_object('id', x.id, 'name', x.name, 'slug', x.slug) order by x.slug)
      from ${links} l join ${labels} x on x.id = l.${sql.identifier(kind.labelId.name)}
     where l.object_id = o.id), '[]'::jsonb)`;
}
