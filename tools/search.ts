import { z } from "zod";
import { id, isoDateInput, pageInput } from "../contract/common.ts";
import { MEDIA_KINDS } from "../contract/media.ts";
import { searchResult } from "../contract/search.ts";
import { searchMedia } from "../domain/search/search.ts";
import { factFilters } from "../contract/facts.ts";
import { defineTool } from "./define.ts";

const isoDate = isoDateInput;

export const searchTools = [
  defineTool({
    name: "search",
    title: "Search media",
    description:
      "Full-text search over object keys and file names, tag and category names and metadata values, ranked by relevance then recency. " +
      'Query syntax: words must all match; "exact phrase"; -word or -"phrase" excludes; sun* matches a prefix; a OR b matches either. ' +
      "Filters narrow the match set (also on what was found in the files: content hash and duplicates, when taken, width, duration); facets count tags, categories and kinds over the whole match set (not just the page).",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/search" },
    input: z.object({
      q: z.string().trim().min(1).max(500).describe("The full-text query"),
      kind: z.enum(MEDIA_KINDS).optional(),
      tags: z.string().max(2000).optional().describe("Comma-separated tag slugs; objects must carry every one"),
      categories: z.string().max(2000).optional().describe("Comma-separated category slugs; objects must be in each (a category includes its descendants)"),
      bucketId: id("Bucket").optional(),
      sizeMin: z.number().int().min(0).optional().describe("Smallest size in bytes"),
      sizeMax: z.number().int().min(0).optional().describe("Largest size in bytes"),
      dateFrom: isoDate.optional().describe("Created at or after (a date means from its start, UTC)"),
      dateTo: isoDate.optional().describe("Created at or before (a date means until its end, UTC)"),
      ...factFilters,
      ...pageInput,
    }),
    output: searchResult,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => searchMedia(deps, caller, input),
  }),
];
