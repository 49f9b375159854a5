import { and, eq, type SQL, sql } from "drizzle-orm";
import { mediaObjects, objectFacts } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { resolveLiveObject } from "../media/object-refs.ts";
import type { ResolvedFactFilters } from "../ports/search.ts";
import { DEFAULT_COLOR_TOLERANCE, labOf } from "../media/colors.ts";

export type { ResolvedFactFilters } from "../ports/search.ts";

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
  /** A colour name or `#rrggbb`: the picture's dominant colour is near it. */
  color?: string | undefined;
  /** Delta E (CIELAB) from `color`. */
  colorTolerance?: number | undefined;
}

const FACT_FILTERS = ["sha256", "duplicatesOf", "takenAfter", "takenBefore", "minWidth", "minHeight", "minDuration", "maxDuration", "color"] as const satisfies readonly (keyof FactFilters)[];

export const hasFactFilters = (f: FactFilters) => FACT_FILTERS.some((k) => f[k] !== undefined);

/** "2026-11-22" means that whole day; a full timestamp means that instant. */
function instant(value: string, end: boolean): Date {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const d = new Date(dateOnly ? `${value}T00:00:00Z` : value);
  return end && dateOnly ? new Date(d.getTime() + 86_400_000 - 1) : d;
}

/**
 * Checks the filters and resolves `duplicatesOf` (an object of the caller's, 404 otherwise)
 * to its hash; null when no filter is set.
 */
export async function resolveFactFilters(deps: Deps, caller: Caller, f: FactFilters): Promise<ResolvedFactFilters | null> {
  if (f.colorTolerance !== undefined && f.color === undefined) {
    throw errors.validation([{ path: "colorTolerance", message: "colorTolerance needs color" }]);
  }
  if (!hasFactFilters(f)) return null;
  if (f.minDuration !== undefined && f.maxDuration !== undefined && f.minDuration > f.maxDuration) {
    throw errors.validation([{ path: "maxDuration", message: "maxDuration must not be below minDuration" }]);
  }
  const out: ResolvedFactFilters = {
    sha256: f.sha256?.toLowerCase(),
    takenFrom: f.takenAfter ? instant(f.takenAfter, false) : undefined,
    takenTo: f.takenBefore ? instant(f.takenBefore, true) : undefined,
    minWidth: f.minWidth,
    minHeight: f.minHeight,
    minDuration: f.minDuration,
    maxDuration: f.maxDuration,
    color: colorFilter(caller.orgId, f),
  };
  if (f.duplicatesOf) {
    const original = await resolveLiveObject(deps.db, caller, f.duplicatesOf);
    const [facts] = await deps.db
      .select({ sha256: objectFacts.sha256 })
      .from(objectFacts)
      .where(and(eq(objectFacts.objectId, original.id), sql`${objectFacts.sourceEtag} is not distinct from ${original.etag}`));
    // Not hashed yet (still being processed): nothing is known to be its duplicate.
    if (!facts?.sha256 || (out.sha256 && out.sha256 !== facts.sha256)) out.none = true;
    out.sha256 = facts?.sha256 ?? out.sha256;
    out.excludeObjectId = original.id;
  }
  return out;
}

function colorFilter(orgId: string, f: FactFilters): ResolvedFactFilters["color"] {
  if (f.color === undefined) return undefined;
  const lab = labOf(f.color);
  if (!lab) throw errors.validation([{ path: "color", message: "a colour name or #rrggbb" }]);
  return { orgId, ...lab, tolerance: f.colorTolerance ?? DEFAULT_COLOR_TOLERANCE };
}

/**
 * `exists (...)`: the object whose id is `objectId` has facts, found in its current version
 * (`etag`), that pass the filters. An object overwritten since matches nothing until its job
 * has run again.
 */
export function factsCondition(r: ResolvedFactFilters, objectId: SQL, etag: SQL): SQL {
  if (r.none) return sql`false`;
  const parts: SQL[] = [sql`f.object_id = ${objectId}`, sql`f.source_etag is not distinct from ${etag}`];
  if (r.excludeObjectId) parts.push(sql`f.object_id <> ${r.excludeObjectId}::uuid`);
  if (r.sha256) parts.push(sql`f.sha256 = ${r.sha256}`);
  if (r.takenFrom) parts.push(sql`f.taken_at >= ${r.takenFrom.toISOString()}::timestamptz`);
  if (r.takenTo) parts.push(sql`f.taken_at <= ${r.takenTo.toISOString()}::timestamptz`);
  if (r.minWidth !== undefined) parts.push(sql`f.width >= ${r.minWidth}`);
  if (r.minHeight !== undefined) parts.push(sql`f.height >= ${r.minHeight}`);
  if (r.minDuration !== undefined) parts.push(sql`f.duration >= ${r.minDuration}`);
  if (r.maxDuration !== undefined) parts.push(sql`f.duration <= ${r.maxDuration}`);
  if (r.color) {
    // The box bounds an index range (org, a*, b*, L*); the sphere inside it is the delta E.
    const { orgId, l, a, b, tolerance: t } = r.color;
    parts.push(sql`f.org_id = ${orgId}::uuid and f.color_l is not null`);
    parts.push(sql`f.color_a between ${a - t}::real and ${a + t}::real and f.color_b between ${b - t}::real and ${b + t}::real and f.color_l between ${l - t}::real and ${l + t}::real`);
    parts.push(sql`(f.color_l - ${l}::real) ^ 2 + (f.color_a - ${a}::real) ^ 2 + (f.color_b - ${b}::real) ^ 2 <= ${t * t}::real`);
  }
  return sql`exists (select 1 from object_facts f where ${sql.join(parts, sql` and `)})`;
}

/** The filters as one condition on media_objects (lists), or null when none is set. */
export async function factFilterCondition(deps: Deps, caller: Caller, f: FactFilters): Promise<SQL | null> {
  const r = await resolveFactFilters(deps, caller, f);
  return r ? factsCondition(r, sql`${mediaObjects.id}`, sql`${mediaObjects.etag}`) : null;
}
