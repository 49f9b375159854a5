import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Label } from "../../contract/labels.ts";
import { type Db, rowsOf } from "../../db/client.ts";
import { mediaObjects } from "../../db/schema/index.ts";
import { anyId, prepared } from "../core/prepared.ts";
import type { LabelKind } from "./kinds.ts";

export type ObjectLabels = Record<LabelKind["key"], Label[]>;

/**
 * Tags and categories of many media objects at once (a labels answer, the Meilisearch sync), as
 * their views show them: `media_objects.labels`, which the database keeps (see below). Every id
 * asked for has an entry (empty lists when it has no labels or is not the organization's).
 * Labels are ordered by slug.
 */
export async function labelsFor(db: Db, orgId: string, objectIds: readonly string[]): Promise<Map<string, ObjectLabels>> {
  const out = new Map<string, ObjectLabels>();
  const ids = [...new Set(objectIds)];
  for (const id of ids) out.set(id, { tags: [], categories: [] });
  if (ids.length === 0) return out;
  const found = await labelsOfObjects(db).execute({ orgId, ids: ids.join(",") });
  for (const { id, labels } of found) out.set(id, { tags: labels.tags ?? [], categories: labels.categories ?? [] });
  return out;
}

/**
 * Prepared (see prepared.ts), with the ids as one parameter, so the text is the same for any
 * number of objects: building a 50-value IN list was most of a listing's own CPU.
 */
function labelsOfObjects(db: Db) {
  return prepared(db, "object_labels", (d) =>
    d
      .select({ id: mediaObjects.id, labels: mediaObjects.labels })
      .from(mediaObjects)
      .where(and(eq(mediaObjects.orgId, sql.placeholder("orgId")), anyId(mediaObjects.id)))
      .prepare("object_labels"),
  );
}

/**
 * `media_objects.labels` is written by the database, not here: triggers on the link tables and
 * on label renames (migration 0024_labels_kept_by_database) rewrite it from the links with the
 * SQL function media_object_labels, whichever release changed them. A release from before the
 * column knows nothing of it and still serves during a rolling upgrade; code that wrote it as
 * well would be a second definition that can disagree with the first.
 *
 * This rewrites the column of the objects `where` selects (over media_objects as `o`) as the
 * triggers do (relabel_media_objects: the objects locked, then their labels read), for what
 * bypassed them (reconcile's repair, a load run with triggers off). Objects whose labels already
 * agree are left as they are. Answers how many changed.
 */
export async function writeObjectLabels(tx: Db, where: SQL): Promise<number> {
  const [row] = rowsOf<{ changed: number }>(
    await tx.execute(sql`select relabel_media_objects(array(select o.id from media_objects o where ${where})) as changed`),
  );
  return Number(row?.changed ?? 0);
}

/** Objects whose `labels` disagree with their links (reconcile): the condition over media_objects as `o`. */
export const staleLabels: SQL = sql`o.labels is distinct from media_object_labels(o.id)`;

/** The objects of an organization with these ids, over media_objects as `o` (one parameter, whatever their number). */
export function objectsWithIds(orgId: string, ids: readonly string[]): SQL {
  return sql`o.org_id = ${orgId} and o.id = any(string_to_array(${ids.join(",")}, ',')::uuid[])`;
}
