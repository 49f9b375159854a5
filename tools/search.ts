import { z } from "zod";
import { id, isoDateInput, pageInput } from "../contract/common.ts";
import { MEDIA_KINDS } from "../contract/media.ts";
import { searchResult, textExtraction } from "../contract/search.ts";
import { searchMedia } from "../domain/search/search.ts";
import { requestTextExtraction } from "../domain/search/text.ts";
import { factFilters } from "../contract/facts.ts";
import { defineTool } from "./define.ts";

const isoDate = isoDateInput;

export const searchTools = [
  defineTool({
    name: "search",
    title: "Search media",
    description: "Full-text search of keys, file names, labels, metadata and text in files, best first; facets count tags, categories, kinds of all matches. q: all words; \"phrase\"; -word; sun*; a OR b.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/search" },
    input: z.object({
      q: z.string().trim().min(1).max(500).describe("The query"),
      kind: z.enum(MEDIA_KINDS).optional().describe("Only this kind"),
      tags: z.string().max(2000).optional().describe("Comma-separated tags (slug, name or id), all required"),
      categories: z.string().max(2000).optional().describe("Comma-separated categories (slug, name or id), all required, subtrees too"),
      bucketId: id("Bucket").optional(),
      sizeMin: z.number().int().min(0).optional().describe("Min bytes"),
      sizeMax: z.number().int().min(0).optional().describe("Max bytes"),
      dateFrom: isoDate.optional().describe("Created on or after this date (UTC)"),
      dateTo: isoDate.optional().describe("Created on or before this date"),
      ...factFilters,
      ...pageInput,
    }),
    output: searchResult,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => searchMedia(deps, caller, input),
  }),
  defineTool({
    name: "media_text_extract",
    title: "Read the text inside files",
    description: "Queues reading the text in one object, or in a bucket's (else all) PDFs, text files and images (OCR), into search.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/search/text-extract" },
    input: z.object({ id: id("Media object").optional(), bucketId: id("Bucket").optional() }),
    output: textExtraction,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => requestTextExtraction(deps, caller, input),
  }),
];
