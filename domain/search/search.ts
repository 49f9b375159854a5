import { and, eq, inArray, isNull, type SQL, sql } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";
import { categories, mediaObjects, tags } from "../../db/schema/index.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { enqueueJob } from "../core/jobs.ts";
import { viewsOf } from "../media/media.ts";
import type { MediaKind } from "../media/kind.ts";
import type { MediaView } from "../media/view.ts";
import type { Facets } from "../ports/search.ts";
import { hasPositiveClause, parseQuery } from "./query.ts";

/**
 * Rewrites the searchable text of these objects from what they are now (key, tag and
 * category names, metadata values), in the caller's transaction, and — when search is
 * external — enqueues their sync in the same transaction. Every change to an object's key,
 * labels or metadata calls this, so nothing is searchable late or lost while a backend is down.
 */
export async function touchSearch(tx: Db, deps: Pick<Deps, "search">, orgId: string, objectIds: readonly string[]): Promise<void> {
  const ids = [...new Set(objectIds)];
  if (ids.length === 0) return;
  const list = sql.join(ids.map((id) => sql`${id}::uuid`), sql`, `);
  await tx.execute(sql`delete from media_search where org_id = ${orgId} and object_id in (${list})`);
  await writeSearchRows(tx, sql`o.org_id = ${orgId} and o.id in (${list})`);
  if (deps.search.external) {
    for (let i = 0; i < ids.length; i += SYNC_BATCH) {
      await enqueueJob(tx, "search.sync", { orgId, objectIds: ids.slice(i, i + SYNC_BATCH) });
    }
  }
}

/**
 * Writes the search rows of the live objects matching `where` (on media_objects as `o`):
 * the one definition of what a search row holds. Soft-deleted objects get none.
 */
export async function writeSearchRows(tx: Db, where: SQL): Promise<void> {
  await tx.execute(sql`
    insert into media_search (object_id, org_id, bucket_id, kind, size, created_at, tag_ids, category_ids, key, labels, meta)
    select o.id, o.org_id, o.bucket_id, o.kind, o.size, o.created_at,
      coalesce((select array_agg(ot.tag_id) from object_tags ot where ot.object_id = o.id), '{}'),
      coalesce((select array_agg(oc.category_id) from object_categories oc where oc.object_id = o.id), '{}'),
      o.key,
      coalesce((select string_agg(t.name, ' ') from object_tags ot join tags t on t.id = ot.tag_id where ot.object_id = o.id), '') || ' ' ||
      coalesce((select string_agg(c.name, ' ') from object_categories oc join categories c on c.id = oc.category_id where oc.object_id = o.id), ''),
      coalesce((select string_agg(e.value, ' ') from jsonb_each_text(o.metadata) e), '')
    from media_objects o
    where o.deleted_at is null and ${where}`);
}

const SYNC_BATCH = 500;

export interface SearchInput {
  q: string;
  kind?: MediaKind | undefined;
  tags?: string | undefined;
  categories?: string | undefined;
  bucketId?: string | undefined;
  sizeMin?: number | undefined;
  sizeMax?: number | undefined;
  dateFrom?: string | undefined;
  dateTo?: string | undefined;
  limit: number;
  offset: number;
}

export interface SearchResult {
  media: MediaView[];
  total: number;
  facets: Facets;
}

const EMPTY: SearchResult = { media: [], total: 0, facets: { tags: [], categories: [], kinds: [] } };

/** Comma-separated slugs (filters of search and media_list), trimmed, lowercased, deduplicated. */
export const slugList = (s: string | undefined) => [...new Set((s ?? "").split(",").map((x) => x.trim().toLowerCase()).filter(Boolean))];

/** "2026-11-22" means that whole day; a full timestamp means that instant. */
function bound(value: string | undefined, end: boolean): Date | null {
  if (!value) return null;
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const d = new Date(dateOnly ? `${value}T00:00:00Z` : value);
  if (!end) return d;
  return new Date(d.getTime() + (dateOnly ? 86_400_000 : 1));
}

/** Spec §4.7. Confined to the caller's organization and the key's bucket, whatever the filters say. */
export async function searchMedia(deps: Deps, caller: Caller, input: SearchInput): Promise<SearchResult> {
  const query = parseQuery(input.q);
  if (!hasPositiveClause(query)) {
    throw errors.validation([{ path: "q", message: "The query needs at least one word to find (negations alone match nothing)" }]);
  }
  if (input.sizeMin !== undefined && input.sizeMax !== undefined && input.sizeMin > input.sizeMax) {
    throw errors.validation([{ path: "sizeMax", message: "sizeMax must not be below sizeMin" }]);
  }
  const dateFrom = bound(input.dateFrom, false);
  const dateBefore = bound(input.dateTo, true);
  if (dateFrom && dateBefore && dateFrom >= dateBefore) throw errors.validation([{ path: "dateTo", message: "dateTo must not be before dateFrom" }]);
  const bucketId = input.bucketId ? (await resolveBucket(deps, caller, input.bucketId)).id : caller.bucketId;

  // Unknown slugs cannot match anything: the answer is empty, not an error.
  const tagSlugs = slugList(input.tags);
  const tagRows = tagSlugs.length ? await deps.db.select({ id: tags.id }).from(tags).where(and(eq(tags.orgId, caller.orgId), inArray(tags.slug, tagSlugs))) : [];
  if (tagRows.length < tagSlugs.length) return EMPTY;
  const categoryGroups = await categoryGroupsFor(deps.db, caller.orgId, slugList(input.categories));
  if (!categoryGroups) return EMPTY;

  const hits = await deps.search.search({
    orgId: caller.orgId,
    query,
    bucketId,
    kind: input.kind ?? null,
    tagIds: tagRows.map((t) => t.id),
    categoryGroups,
    sizeMin: input.sizeMin ?? null,
    sizeMax: input.sizeMax ?? null,
    dateFrom,
    dateBefore,
    limit: input.limit,
    offset: input.offset,
  });
  const rows = hits.ids.length
    ? await deps.db.select().from(mediaObjects).where(and(eq(mediaObjects.orgId, caller.orgId), isNull(mediaObjects.deletedAt), inArray(mediaObjects.id, hits.ids)))
    : [];
  const order = new Map(hits.ids.map((id, i) => [id, i]));
  rows.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  return { media: await viewsOf(deps, caller.orgId, rows), total: hits.total, facets: hits.facets };
}

/**
 * Each category slug stands for that category and everything below it. Returns one group of
 * ids per slug, or null when a slug is unknown.
 */
async function categoryGroupsFor(db: Db, orgId: string, slugs: string[]): Promise<string[][] | null> {
  if (slugs.length === 0) return [];
  const roots = await db.select({ id: categories.id, slug: categories.slug }).from(categories).where(and(eq(categories.orgId, orgId), inArray(categories.slug, slugs)));
  if (roots.length < slugs.length) return null;
  const groups: string[][] = [];
  for (const root of roots) {
    const result = await db.execute(sql`
      with recursive sub as (
        select id from categories where id = ${root.id} and org_id = ${orgId}
        union all
        select c.id from categories c join sub on c.parent_id = sub.id where c.org_id = ${orgId}
      ) select id from sub`);
    groups.push(rowsOf<{ id: string }>(result).map((r) => r.id));
  }
  return groups;
}
