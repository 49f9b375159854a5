import { z } from "zod";
import { SCOPES } from "../domain/access/caller.ts";
import { DEFAULT_LIMIT, MAX_LIMIT } from "../domain/core/pagination.ts";

/** Shared pieces of tool schemas. */

export const id = (what: string) => z.uuid().describe(`${what} id (UUID)`);
export const timestamp = (what: string) => z.iso.datetime().describe(`${what} (ISO-8601 UTC)`);
export const scope = z.enum(SCOPES);

export const pageInput = {
  limit: z.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT).describe(`Page size, 1..${MAX_LIMIT}`),
  offset: z.number().int().min(0).default(0).describe("Number of items to skip"),
};

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    total: z.number().int().describe("Items matching, across all pages"),
    hasMore: z.boolean().describe("True when another page follows"),
  });
}

export const deleted = (what: string) =>
  z.object({ id: id(what), deleted: z.literal(true) });
