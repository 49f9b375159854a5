import { z } from "zod";
import { isoDateInput } from "./common.ts";

const day = isoDateInput;

/** Filters on what the worker found in the files; lists answer only objects it has processed. */
export const factFilters = {
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, "64 hexadecimal characters").optional().describe("Objects whose bytes have this SHA-256 (info.sha256)"),
  duplicatesOf: z.string().uuid().optional().describe("The other objects with exactly the same bytes as this one"),
  takenAfter: day.optional().describe("Photos (EXIF) and videos taken at or after (a date means from its start, UTC)"),
  takenBefore: day.optional().describe("Taken at or before (a date means until its end, UTC)"),
  minWidth: z.number().int().min(1).max(1_000_000).optional().describe("Images and videos at least this wide, in pixels as displayed"),
  minHeight: z.number().int().min(1).max(1_000_000).optional().describe("At least this tall, in pixels as displayed"),
  minDuration: z.number().min(0).max(1e9).optional().describe("Audio and video at least this long, in seconds"),
  maxDuration: z.number().min(0).max(1e9).optional().describe("At most this long, in seconds"),
};
