import { and, eq, inArray, sql } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";
import type { SearchResult } from "../../contract/search.ts";
import { categories, tags } from "../../db/schema/index.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { readDb } from "../core/reads.ts";
import { errors } from "../core/errors.ts";
import { viewsTextOf } from "../media/media.ts";
import { JsonBody, withTextField } from "../core/json-body.ts";
import { idList } from "../media/view-rows.ts";
import type { MediaKind } from "../media/kind.ts";
import { complexityProblems, hasPositiveClause, parseQuery } from "./query.ts";
import { labelSlugs } from "../labels/refs.ts";
import { type FactFilters, resolveFactFilters } from "../derivatives/facts.ts";
import type { SearchHits, SearchRequest } from "../ports/search.ts";
import { answerCacheFor } from "./answer-cache.ts";

export interface SearchInput extends FactFilters {
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

const EMPTY = new JsonBody<SearchResult>(JSON.stringify({ media: [], total: 0, totalRelation: "eq", facets: { tags: [], categories: [], kinds: [] }, facetsApproximate: false } satisfies SearchResult));


/** "2026-11-22" means that whole day; a full timestamp means that instant. */
function bound(value: string | undefined, end: boolean): Date | null {
  if (!value) return null;
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const d = new Date(dateOnly ? `${value}T00:00:00Z` : value);
  if (!end) return d;
  return new Date(d.getTime() + (dateOnly ? 86_400_000 : 1));
}

/**
 * Confined to the caller's organization and the key's bucket, whatever the filters say. The
 * answer is JSON text around the page's views as PostgreSQL wrote them (domain/media/view-rows.ts).
 */
export async function searchMedia(deps: Deps, caller: Caller, input: SearchInput): Promise<JsonBody<SearchResult>> {
  // Chosen together, so the hits and the views read after them come from the same replica.
  const replica = deps.reads?.replicaFor(caller.orgId, "search") ?? null;
  const primary = deps.db;
  deps = { ...deps, db: readDb(deps, caller.orgId) };
  const query = parseQuery(input.q);
  if (!hasPositiveClause(query)) {
    throw errors.validation([{ path: "q", message: "The query needs at least one word to find (negations alone match nothing)" }]);
  }
  const tooCostly = complexityProblems(query);
  if (tooCostly.length) throw errors.validation(tooCostly.map((message) => ({ path: "q", message })));
  if (input.sizeMin !== undefined && input.sizeMax !== undefined && input.sizeMin > input.sizeMax) {
    throw errors.validation([{ path: "sizeMax", message: "sizeMax must not be below sizeMin" }]);
  }
  const dateFrom = bound(input.dateFrom, false);
  const dateBefore = bound(input.dateTo, true);
  if (dateFrom && dateBefore && dateFrom >= dateBefore) throw errors.validation([{ path: "dateTo", message: "dateTo must not be before dateFrom" }]);
  const bucketId = input.bucketId ? (await resolveBucket(deps, caller, input.bucketId)).id : caller.bucketId;
  const facts = await resolveFactFilters(deps, caller, input);

  // Unknown slugs cannot match anything: the answer is empty, not an error.
  // A tag or category is named by id, slug or name (domain/labels/refs.ts).
  const tagSlugs = await labelSlugs(deps.db, tags, caller.orgId, input.tags);
  const tagRows = tagSlugs.length ? await deps.db.select({ id: tags.id }).from(tags).where(and(eq(tags.orgId, caller.orgId), inArray(tags.slug, tagSlugs))) : [];
  if (tagRows.length < tagSlugs.length) return EMPTY;
  const categoryGroups = await categoryGroupsFor(deps.db, caller.orgId, await labelSlugs(deps.db, categories, caller.orgId, input.categories));
  if (!categoryGroups) return EMPTY;

  const request = {
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
    facts,
    limit: input.limit,
    offset: input.offset,
    exactUpTo: deps.config.searchExactLimit,
    replica,
  };
  // The one statement whose cost the caller steers holds one of the organization's search slots.
  const search = () => (deps.concurrency ? deps.concurrency.search.run(caller.orgId, () => deps.search.search(request)) : deps.search.search(request));
  const hits = cacheable(deps, request) ? await throughCache(deps, primary, request, search) : await search();
  // Deleted since the index answered (an external backend syncs later): left out.
  const media = await viewsTextOf(deps, caller.orgId, hits.ids, { live: true, primary: { db: primary, clock: deps.clock } });
  const matchOf = new Map((hits.matches ?? []).map((m) => [m.id, m]));
  return withTextField<SearchResult>("media", media.views, {
    ...(hits.matches ? { matches: idList(media.ids).map((id) => matchOf.get(id) ?? { id, in: [], page: null, snippet: null }) } : {}),
    total: hits.total,
    totalRelation: hits.totalRelation,
    facets: hits.facets,
    facetsApproximate: hits.facetsApproximate,
  });
}

/**
 * Answers are kept (domain/search/answer-cache.ts) for the PostgreSQL backend only: an external
 * one is synced later than the database's change rows say. Not for a search read from a replica,
 * whose snapshots trail the primary's that pruning goes by, nor with filters on the files' facts,
 * which the worker writes into tables the change rows do not follow.
 */
function cacheable(deps: Deps, request: SearchRequest): boolean {
  return deps.search.name === "postgres" && !request.replica && !request.facts;
}

/**
 * The kept hits of the same search when nothing searchable of the organization changed since,
 * else the search's, kept. The key is everything the hits depend on: the organization, the
 * bucket (a key restricted to one never shares another's counts), the query, every filter and
 * the page.
 */
async function throughCache(deps: Deps, primary: Deps["db"], request: SearchRequest, search: () => Promise<SearchHits>): Promise<SearchHits> {
  const cache = answerCacheFor(primary);
  const { replica: _, ...asked } = request;
  const key = JSON.stringify(asked);
  const { hits: kept, taken } = await cache.lookup(primary, request.orgId, key);
  cache.prune(primary, (err) => deps.log.warn("search_changes prune failed", { err: String(err) }));
  if (kept) return kept;
  const hits = await search();
  cache.store(key, taken, hits);
  return hits;
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
