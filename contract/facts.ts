import { z } from "zod";
import { isoDateInput } from "./common.ts";

const day = isoDateInput;

/** Filters on what the worker found in the files; lists answer only objects it has processed. */
export const factFilters = {
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, "64 hexadecimal characters").optional().describe("SHA-256 of the bytes, hex"),
  duplicatesOf: z.string().uuid().optional().describe("Same bytes as this object"),
  takenAfter: day.optional().describe("Taken at or after (a date: from its start, UTC)"),
  takenBefore: day.optional().describe("Taken at or before (a date: to its end)"),
  minWidth: z.number().int().min(1).max(1_000_000).optional().describe("At least this wide, pixels as displayed"),
  minHeight: z.number().int().min(1).max(1_000_000).optional().describe("At least this tall, pixels as displayed"),
  minDuration: z.number().min(0).max(1e9).optional().describe("At least this long, seconds"),
  maxDuration: z.number().min(0).max(1e9).optional().describe("At most this long, seconds"),
};
