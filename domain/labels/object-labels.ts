import { and, asc, eq, sql } from "drizzle-orm";
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
