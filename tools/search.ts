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
    description: "Full-text search of keys, file names, labels and metadata, best match first; facets count tags, categories and kinds over all matches. Query: all words; \"phrase\"; -word excludes; sun* prefix; a OR b.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/search" },
    input: z.object({
      q: z.string().trim().min(1).max(500).describe("The query"),
      kind: z.enum(MEDIA_KINDS).optional().describe("Only objects of this kind"),
      tags: z.string().max(2000).optional().describe("Comma-separated tags (slug, name or id), all required"),
      categories: z.string().max(2000).optional().describe("Comma-separated categories (slug, name or id), all required (with descendants)"),
      bucketId: id("Bucket").optional(),
      sizeMin: z.number().int().min(0).optional().describe("At least this many bytes"),
      sizeMax: z.number().int().min(0).optional().describe("At most this many bytes"),
      dateFrom: isoDate.optional().describe("Created at or after (a date: from its start, UTC)"),
      dateTo: isoDate.optional().describe("Created at or before (a date: to its end)"),
      ...factFilters,
      ...pageInput,
    }),
    output: searchResult,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => searchMedia(deps, caller, input),
  }),
];
