import { z } from "zod";
import { isoDateInput } from "./common.ts";

const day = isoDateInput;

/** The colour names the `color` filter accepts (domain/media/colors.ts says which colour each is). */
export const COLOR_NAMES = ["red", "orange", "yellow", "green", "teal", "blue", "purple", "pink", "brown", "black", "gray", "white"] as const;
export type ColorName = (typeof COLOR_NAMES)[number];

/** Filters on what the worker found in the files; lists answer only objects it has processed. */
export const factFilters = {
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, "64 hexadecimal characters").optional().describe("SHA-256 of the bytes, hex"),
  duplicatesOf: z.string().uuid().optional().describe("Same bytes as this object"),
  takenAfter: day.optional().describe("Taken on or after this date (UTC)"),
  takenBefore: day.optional().describe("Taken on or before this date"),
  minWidth: z.number().int().min(1).max(1_000_000).optional().describe("Min width, pixels as shown"),
  minHeight: z.number().int().min(1).max(1_000_000).optional().describe("Min height, pixels as shown"),
  minDuration: z.number().min(0).max(1e9).optional().describe("Min seconds"),
  maxDuration: z.number().min(0).max(1e9).optional().describe("Max seconds"),
  color: z
    .string()
    .regex(new RegExp(`^(#[0-9a-fA-F]{6}|${COLOR_NAMES.join("|")})$`), "a colour name or #rrggbb")
    .optional()
    .describe("Dominant colour"),
  colorTolerance: z.number().min(0).max(100).optional().describe("Delta E from color (default 20)"),
};
