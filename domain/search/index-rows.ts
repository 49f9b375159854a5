import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Deps } from "../core/deps.ts";
import { enqueueJob } from "../core/jobs.ts";
import type { ObjectRemoved, ObjectRestored, ObjectStored } from "../media/lifecycle.ts";

/**
 * Rewrites the searchable text of these objects from what they are now (key, tag and
 * category names, metadata values, the words found inside them), in the caller's transaction, and — when search is
 * external — enqueues their sync in the same transaction. Every change to an object's key,
 * labels or metadata calls this, so nothing is searchable late or lost while a backend is down.
 */
export async function touchSearch(tx: Db, deps: Pick<Deps, "search">, orgId: string, objectIds: readonly string[]): Promise<void> {
  const ids = [...new Set(objectIds)];
  if (ids.length === 0) return;
  const list = sql.join(ids.map((id) => sql`${id}::uuid`), sql`, `);
  // One statement, as every upload's confirm runs it: rows of objects that are gone or
  // soft-deleted are deleted, the others written over (a new object's row is simply inserted).
  // The two parts touch different rows, so running them on one snapshot is safe.
  await tx.execute(sql`
    with gone as (
      delete from media_search s where s.org_id = ${orgId} and s.object_id in (${list})
        and not exists (select 1 from media_objects o where o.id = s.object_id and o.deleted_at is null)
    )
    ${searchRowsOf(sql`o.org_id = ${orgId} and o.id in (${list})`)}
    on conflict (object_id) do update set ${REWRITTEN}`);
  if (deps.search.external) {
    for (let i = 0; i < ids.length; i += SYNC_BATCH) {
      await enqueueJob(tx, "search.sync", { orgId, objectIds: ids.slice(i, i + SYNC_BATCH) });
    }
  }
}

/**
 * Writes the search rows of the live objects matching `where` (on media_objects as `o`).
 * Soft-deleted objects get none.
 */
export async function writeSearchRows(tx: Db, where: SQL): Promise<void> {
  await tx.execute(searchRowsOf(where));
}

/** A search row's written columns, in the order searchRowsOf selects them (`vector` is generated from them). */
const COLUMNS = ["object_id", "org_id", "bucket_id", "kind", "size", "created_at", "tag_ids", "category_ids", "key", "labels", "meta", "body"] as const;
/** What touchSearch writes over in an existing row: every column but the object and its organization, which never change. */
const REWRITTEN = sql.raw(
  COLUMNS.filter((c) => c !== "object_id" && c !== "org_id")
    .map((c) => `${c} = excluded.${c}`)
    .join(", "),
);

/** The insert of the search rows of the live objects matching `where`: the one definition of what a search row holds. */
function searchRowsOf(where: SQL): SQL {
  return sql`
    insert into media_search (${sql.raw(COLUMNS.join(", "))})
    select o.id, o.org_id, o.bucket_id, o.kind, o.size, o.created_at,
      coalesce((select array_agg(ot.tag_id) from object_tags ot where ot.object_id = o.id), '{}'),
      coalesce((select array_agg(oc.category_id) from object_categories oc where oc.object_id = o.id), '{}'),
      o.key,
      coalesce((select string_agg(t.name, ' ') from object_tags ot join tags t on t.id = ot.tag_id where ot.object_id = o.id), '') || ' ' ||
      coalesce((select string_agg(c.name, ' ') from object_categories oc join categories c on c.id = oc.category_id where oc.object_id = o.id), ''),
      coalesce((select string_agg(e.value, ' ') from jsonb_each_text(o.metadata) e), ''),
      coalesce((select string_agg(x.text, ' ' order by x.source, x.page) from media_text x where x.object_id = o.id), '')
    from media_objects o
    where o.deleted_at is null and ${where}`;
}

const SYNC_BATCH = 500;

/** An object's searchable text follows it: stored, deleted (the row goes), restored and purged. */
export async function reindexObject(e: ObjectStored | ObjectRemoved | ObjectRestored): Promise<void> {
  await touchSearch(e.tx, e.deps, e.orgId, [e.object.id]);
}
