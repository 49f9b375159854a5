import { and, eq, type SQL, sql } from "drizzle-orm";
import { mediaObjects, objectFacts } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { resolveLiveObject } from "../media/object-refs.ts";

/** Filters on what the worker found in the files (object_facts); every one is optional. */
export interface FactFilters {
  /** Objects whose bytes hash to this SHA-256 (hex). */
  sha256?: string | undefined;
  /** The other objects with the same bytes as this one (its duplicates). */
  duplicatesOf?: string | undefined;
  takenAfter?: string | undefined;
  takenBefore?: string | undefined;
  minWidth?: number | undefined;
  minHeight?: number | undefined;
  /** Seconds. */
  minDuration?: number | undefined;
  maxDuration?: number | undefined;
}

const FACT_FILTERS = ["sha256", "duplicatesOf", "takenAfter", "takenBefore", "minWidth", "minHeight", "minDuration", "maxDuration"] as const satisfies readonly (keyof FactFilters)[];

export const hasFactFilters = (f: FactFilters) => FACT_FILTERS.some((k) => f[k] !== undefined);

/** "2026-11-22" means that whole day; a full timestamp means that instant. */
function instant(value: string, end: boolean): Date {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const d = new Date(dateOnly ? `${value}T00:00:00Z` : value);
  return end && dateOnly ? new Date(d.getTime() + 86_400_000 - 1) : d;
}

/**
 * One condition on media_objects for the filters, or null when none is set. Facts count only
 * for the version they were found in: an object overwritten since matches nothing until its
 * job has run again.
 */
export async function factFilterCondition(deps: Deps, caller: Caller, f: FactFilters): Promise<SQL | null> {
  if (!hasFactFilters(f)) return null;
  const parts: SQL[] = [sql`f.object_id = ${mediaObjects.id}`, sql`f.source_etag is not distinct from ${mediaObjects.etag}`];
  if (f.minDuration !== undefined && f.maxDuration !== undefined && f.minDuration > f.maxDuration) {
    throw errors.validation([{ path: "maxDuration", message: "maxDuration must not be below minDuration" }]);
  }
  if (f.duplicatesOf) {
    const original = await resolveLiveObject(deps.db, caller, f.duplicatesOf);
    const [facts] = await deps.db
      .select({ sha256: objectFacts.sha256 })
      .from(objectFacts)
      .where(and(eq(objectFacts.objectId, original.id), sql`${objectFacts.sourceEtag} is not distinct from ${original.etag}`));
    // Not hashed yet (still being processed): nothing is known to be its duplicate.
    parts.push(facts?.sha256 ? sql`f.sha256 = ${facts.sha256}` : sql`false`);
    parts.push(sql`${mediaObjects.id} <> ${original.id}`);
  }
  if (f.sha256) parts.push(sql`f.sha256 = ${f.sha256.toLowerCase()}`);
  if (f.takenAfter) parts.push(sql`f.taken_at >= ${instant(f.takenAfter, false).toISOString()}::timestamptz`);
  if (f.takenBefore) parts.push(sql`f.taken_at <= ${instant(f.takenBefore, true).toISOString()}::timestamptz`);
  if (f.minWidth !== undefined) parts.push(sql`f.width >= ${f.minWidth}`);
  if (f.minHeight !== undefined) parts.push(sql`f.height >= ${f.minHeight}`);
  if (f.minDuration !== undefined) parts.push(sql`f.duration >= ${f.minDuration}`);
  if (f.maxDuration !== undefined) parts.push(sql`f.duration <= ${f.maxDuration}`);
  return sql`exists (select 1 from object_facts f where ${sql.join(parts, sql` and `)})`;
}

