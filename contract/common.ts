import { z } from "zod";

/**
 * Pieces every resource shape is made of. The contract is the single source of each shape the
 * service answers with: tools declare these schemas as outputs, domain functions return their
 * inferred types, and OpenAPI publishes the ones named with `meta({ id })` as components.
 * Contract files import only zod and each other.
 */

export const id = (what: string) => z.uuid().describe(`${what} id (UUID)`);
/**
 * A date (2026-11-22) or date-time input, in years 0001 to 9999 after any offset: JavaScript
 * parses years 0000 and 275760, which PostgreSQL refuses (a 500 before this check).
 */
export const isoDateInput = z.string().refine((v) => onTheCalendar(v) && storableYear(v), "an ISO date (2026-11-22) or date-time (2026-11-22T10:00:00Z) that exists, in years 0001 to 9999");
export const timestamp = (what: string) => z.iso.datetime().describe(`${what} (ISO-8601 UTC)`);
/**
 * A timestamp a caller sends: ISO-8601 UTC in years 0001 to 9999, for the same reason as
 * isoDateInput. Its year is judged only once it is a date-time, so a malformed one gets one error.
 */
export const timestampInput = (what: string) => z.iso.datetime({ abort: true }).describe(`${what} (ISO-8601 UTC)`).refine(storableYear, "a date-time in years 0001 to 9999");

/**
 * Whether a date or date-time names a day and a time that exist. Date.parse rolls 2026-02-30
 * over to March 2 (and 24:00 to the next day), so an impossible date used to filter on another one.
 */
function onTheCalendar(v: string): boolean {
  const m = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2}):(\d{2})))?$/.exec(v);
  if (!m || !z.iso.date().safeParse(m[1]).success) return false;
  const [hour, minute, second, offsetHours, offsetMinutes] = m.slice(2).map(Number);
  return !(hour! > 23 || minute! > 59 || second! > 59 || offsetHours! > 23 || offsetMinutes! > 59);
}

function storableYear(v: string): boolean {
  const t = Date.parse(v);
  if (Number.isNaN(t)) return false;
  const year = new Date(t).getUTCFullYear();
  return year >= 1 && year <= 9999;
}

/** `admin` implies every other scope. */
export const SCOPES = ["read", "write", "delete", "admin"] as const;
export type Scope = (typeof SCOPES)[number];
export const scope = z.enum(SCOPES);

/** Lists: default page size 50, offset 0; pages of at most 200. */
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export const pageInput = {
  limit: z.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT).describe("Page size"),
  offset: z.number().int().min(0).default(0).describe("Items to skip"),
};

/**
 * A page of `item`s. The list is named after its item (`Bucket` → `BucketList`), so clients
 * generated from the OpenAPI document get a type for every list too.
 */
export function listOf<T extends z.ZodType>(item: T, name = `${z.globalRegistry.get(item)?.id ?? "Item"}List`) {
  return z
    .object({
      data: z.array(item),
      total: z.number().int().describe("Items matching, across all pages"),
      hasMore: z.boolean().describe("True when another page follows"),
    })
    .meta({ id: name });
}

/** A page of a list: what `listOf(item)` describes. */
export type Page<T> = z.output<ReturnType<typeof listOf<z.ZodType<T>>>>;

/** What deleting anything answers: one shape, so clients get one type for it. */
export const deleted = z.object({ id: z.uuid().describe("Id of what was deleted (UUID)"), deleted: z.literal(true) }).meta({ id: "Deleted" });
export type Deleted = z.output<typeof deleted>;

export const bytes = (what: string) => z.number().int().describe(`${what}, bytes`);
