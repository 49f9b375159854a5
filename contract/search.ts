import { z } from "zod";
import { MEDIA_KINDS, mediaObject } from "./media.ts";

export const facetCount = z.object({ slug: z.string(), name: z.string(), count: z.number().int() }).meta({ id: "FacetCount" });
export type FacetCount = z.output<typeof facetCount>;

/** Counted over the whole match set (up to the exact limit, see `facetsApproximate`), not the page. */
export const facets = z
  .object({
    tags: z.array(facetCount).describe("Tags of the matching objects, most frequent first (at most 100)"),
    categories: z.array(facetCount).describe("Categories directly assigned to the matching objects, most frequent first (at most 100)"),
    kinds: z.array(z.object({ kind: z.enum(MEDIA_KINDS), count: z.number().int() })),
  })
  .meta({ id: "Facets" });
export type Facets = z.output<typeof facets>;

export const MATCH_FIELDS = ["name", "tags", "metadata", "text"] as const;

/** Where a result matched, for a page of results (an addition: the fields above are as ever). */
export const searchMatch = z
  .object({
    id: z.string().describe("Media object id (as in media)"),
    in: z.array(z.enum(MATCH_FIELDS)).describe("Fields holding a query word: name (key), tags (tag or category names), metadata, text (inside the file)"),
    page: z.number().int().nullable().describe("PDF page of the text match"),
    snippet: z.string().nullable().describe("Matched words in <mark>, HTML-escaped"),
  })
  .meta({ id: "SearchMatch" });
export type SearchMatch = z.output<typeof searchMatch>;

export const searchResult = z
  .object({
    media: z.array(mediaObject),
    total: z
      .number()
      .int()
      .describe('Objects matching, across all pages: exact when totalRelation is "eq"; when "gte", at least this many (the exact limit, 10,000 by default, was reached and counting stopped)'),
    totalRelation: z
      .enum(["eq", "gte"])
      .describe('"eq": total is exact. "gte": more objects match than the exact limit; total is that limit, a lower bound (as Elasticsearch\'s track_total_hits)'),
    facets,
    facetsApproximate: z
      .boolean()
      .describe("True when the facets were counted over the first matches up to the exact limit rather than all of them (exactly when totalRelation is \"gte\")"),
    matches: z.array(searchMatch).optional().describe("Per result on the page, in order: where it matched"),
  })
  .meta({ id: "SearchResult" });
export type SearchResult = z.output<typeof searchResult>;

/** What media_text_extract started: one object read now, or a bucket's or the organization's backfill. */
export const textExtraction = z
  .object({
    scope: z.enum(["object", "bucket", "organization"]),
    resumed: z.boolean().describe("An unfinished run continues at its cursor"),
  })
  .meta({ id: "TextExtraction" });
export type TextExtraction = z.output<typeof textExtraction>;
