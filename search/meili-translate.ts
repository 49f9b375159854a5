import type { Facets, SearchMatch } from "../contract/search.ts";
import { MARK_START, MARK_STOP, markedSnippet } from "../domain/search/snippet.ts";
import { FACET_LIMIT, type SearchRequest } from "../domain/ports/search.ts";
import type { Clause, ParsedQuery } from "../domain/search/query.ts";
import type { MediaKind } from "../contract/media.ts";

/**
 * Pure translations between our search model and Meilisearch's, kept apart from the client
 * so they can be unit-tested without a server (none can be installed here).
 */

/** The document we index per live media object. */
export interface MeiliDoc {
  id: string;
  orgId: string;
  bucketId: string;
  key: string;
  /** The key with separators as spaces, so "img_2026.jpg" is three words. */
  keyWords: string;
  fileName: string;
  labels: string;
  meta: string;
  /** The words inside the file (media_text, every page in order), as the PostgreSQL search row's body. */
  text: string;
  tagIds: string[];
  categoryIds: string[];
  kind: MediaKind;
  size: number;
  /** Milliseconds since the epoch: numeric, so it can be filtered and ranked. */
  createdAt: number;
  /** The dominant colour in CIELAB, for the `color` filter; absent when the worker found none. */
  colorL?: number;
  colorA?: number;
  colorB?: number;
}

/**
 * The index's settings, applied before the first sync batch and again after any failure
 * (meilisearch.ts): updating settings to the values they have is a no-op task.
 */
export function indexSettings(exactUpTo: number) {
  return {
    // Order is attribute ranking: key words count most, then file name, labels, metadata, the text inside.
    searchableAttributes: ["keyWords", "fileName", "labels", "meta", "text"],
    filterableAttributes: ["orgId", "bucketId", "kind", "tagIds", "categoryIds", "size", "createdAt", "colorL", "colorA", "colorB"],
    sortableAttributes: ["createdAt", "size"],
    // Relevance first, then recency (spec-level rule shared with the PostgreSQL backend).
    rankingRules: ["words", "typo", "proximity", "attribute", "sort", "exactness", "createdAt:desc"],
    // The 100 values kept per facet must be the most frequent ones, as the PostgreSQL backend
    // keeps: Meilisearch's default order is alphabetical, which can drop the biggest tags.
    faceting: { maxValuesPerFacet: FACET_LIMIT, sortFacetValuesBy: { "*": "count" as const } },
    // One hit past the exact limit tells "more than the limit" from "exactly the limit".
    pagination: { maxTotalHits: exactUpTo + 1 },
  };
}

// Quotes and backslashes would change Meilisearch's reading of the query: they become spaces.
const words = (text: string) => text.replace(/[/._\-"\\]+/g, " ").trim();
const quote = (text: string) => `"${words(text)}"`;

/**
 * Meilisearch's `q`: phrases stay quoted, negations keep their "-", a prefix term goes last
 * (Meilisearch matches the last word as a prefix). OR has no equivalent in `q`: its words
 * are all required instead (README).
 */
export function meiliQuery(q: ParsedQuery): string {
  const positive: string[] = [];
  const negative: string[] = [];
  let prefix: string | null = null;
  const add = (c: Clause, into: string[]) => {
    switch (c.type) {
      case "term":
        if (c.prefix && into === positive && prefix === null) prefix = words(c.text);
        else into.push(words(c.text));
        break;
      case "phrase":
        into.push(quote(c.text));
        break;
      case "not":
        add(c.clause, negative);
        break;
      case "or":
        for (const inner of c.clauses) add(inner, into);
        break;
    }
  };
  for (const c of q.clauses) add(c, positive);
  return [...positive, ...negative.map((n) => `-${n}`), ...(prefix ? [prefix] : [])].join(" ").replace(/\s+/g, " ").trim();
}

/** Filter expression: ids are UUIDs and kinds an enum, so quoting cannot be escaped from. */
export function meiliFilter(req: SearchRequest): string {
  const parts = [`orgId = "${req.orgId}"`];
  if (req.bucketId) parts.push(`bucketId = "${req.bucketId}"`);
  if (req.kind) parts.push(`kind = "${req.kind}"`);
  for (const id of req.tagIds) parts.push(`tagIds = "${id}"`);
  for (const group of req.categoryGroups) parts.push(`categoryIds IN [${group.map((id) => `"${id}"`).join(", ")}]`);
  if (req.sizeMin !== null) parts.push(`size >= ${req.sizeMin}`);
  if (req.sizeMax !== null) parts.push(`size <= ${req.sizeMax}`);
  if (req.dateFrom) parts.push(`createdAt >= ${req.dateFrom.getTime()}`);
  if (req.dateBefore) parts.push(`createdAt < ${req.dateBefore.getTime()}`);
  const color = req.facts?.color;
  if (color) {
    // A filter compares numbers one at a time: the cube around the colour, not the delta E sphere inside it.
    const t = color.tolerance;
    for (const [field, v] of [["colorL", color.l], ["colorA", color.a], ["colorB", color.b]] as const) parts.push(`${field} ${v - t} TO ${v + t}`);
  }
  return parts.join(" AND ");
}

/**
 * Meilisearch counts exactly (`totalHits`, and facets over every match) only in page mode,
 * so every request uses it: an aligned offset is a page; any other is the first page of
 * `offset + limit` hits, of which the caller drops the first `skip` (ids only, so cheap).
 */
export function meiliPaging(limit: number, offset: number): { page: number; hitsPerPage: number; skip: number } {
  return offset % limit === 0 ? { page: offset / limit + 1, hitsPerPage: limit, skip: 0 } : { page: 1, hitsPerPage: offset + limit, skip: offset };
}

/** Meilisearch's exhaustive total (bounded by maxTotalHits = exactUpTo + 1) to ours. */
export function totalOf(totalHits: number, exactUpTo: number): { total: number; totalRelation: "eq" | "gte" } {
  return totalHits > exactUpTo ? { total: exactUpTo, totalRelation: "gte" } : { total: totalHits, totalRelation: "eq" };
}

/** Facet distribution (by id) to our facet lists (by slug and name), most frequent first. */
export function toFacets(
  distribution: Record<string, Record<string, number>> | undefined,
  names: { tags: Map<string, { slug: string; name: string }>; categories: Map<string, { slug: string; name: string }> },
): Facets {
  const list = (field: string, lookup: Map<string, { slug: string; name: string }>) =>
    Object.entries(distribution?.[field] ?? {})
      .flatMap(([id, count]) => {
        const label = lookup.get(id);
        return label ? [{ ...label, count }] : [];
      })
      .sort((a, b) => b.count - a.count || (a.slug < b.slug ? -1 : 1));
  return {
    tags: list("tagIds", names.tags),
    categories: list("categoryIds", names.categories),
    kinds: Object.entries(distribution?.kind ?? {})
      .map(([kind, count]) => ({ kind: kind as MediaKind, count }))
      .sort((a, b) => b.count - a.count || (a.kind < b.kind ? -1 : 1)),
  };
}

/** What a search asks for besides the ids: where each hit matched, and the text and metadata around it, marked. */
export const MATCH_REQUEST = {
  showMatchesPosition: true,
  attributesToHighlight: ["text", "meta"],
  attributesToCrop: ["text", "meta"],
  cropLength: 24,
  highlightPreTag: MARK_START,
  highlightPostTag: MARK_STOP,
} as const;

const FIELD_OF: Record<string, SearchMatch["in"][number]> = { keyWords: "name", fileName: "name", key: "name", labels: "tags", meta: "metadata", text: "text" };

/** A hit's match, from its `_matchesPosition` and `_formatted` (Meilisearch knows no pages: page is null). */
export function meiliMatch(hit: { id: string; _matchesPosition?: Record<string, unknown>; _formatted?: Record<string, unknown> }): SearchMatch {
  const fields = new Set(Object.keys(hit._matchesPosition ?? {}).flatMap((k) => (FIELD_OF[k.split(".")[0]!] ? [FIELD_OF[k.split(".")[0]!]!] : [])));
  const order = ["name", "tags", "metadata", "text"] as const;
  const formatted = hit._formatted ?? {};
  const raw = fields.has("text") ? formatted.text : fields.has("metadata") ? formatted.meta : undefined;
  return { id: hit.id, in: order.filter((f) => fields.has(f)), page: null, snippet: typeof raw === "string" && raw.includes(MARK_START) ? markedSnippet(raw) : null };
}
