import { z } from "zod";
import { MEDIA_KINDS, mediaObject } from "./media.ts";

export const facetCount = z.object({ slug: z.string(), name: z.string(), count: z.number().int() }).meta({ id: "FacetCount" });
export type FacetCount = z.output<typeof facetCount>;

/** Counted over the whole match set, not the page. */
export const facets = z
  .object({
    tags: z.array(facetCount).describe("Tags of the matching objects, most frequent first (at most 100)"),
    categories: z.array(facetCount).describe("Categories directly assigned to the matching objects, most frequent first (at most 100)"),
    kinds: z.array(z.object({ kind: z.enum(MEDIA_KINDS), count: z.number().int() })),
  })
  .meta({ id: "Facets" });
export type Facets = z.output<typeof facets>;

export const searchResult = z
  .object({
    media: z.array(mediaObject),
    total: z.number().int().describe("Objects matching, across all pages"),
    facets,
  })
  .meta({ id: "SearchResult" });
export type SearchResult = z.output<typeof searchResult>;
