import { and, type Placeholder, type SQL, eq, isNull, sql } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";
import type { Caller } from "../access/caller.ts";
import { assertBucketAllowed } from "../access/visibility.ts";
import { mediaObjects, orgUsage, usageDaily } from "../../db/schema/index.ts";
import type { Deps } from "../core/deps.ts";
import { prepared } from "../core/prepared.ts";
import { AppError, errors } from "../core/errors.ts";
import { recordUsageEvent } from "./events.ts";

/** "2026-11-01": the key of the month a moment falls in (UTC). */
export function monthOf(d: Date): string {
  return `${d.toISOString().slice(0, 7)}-01`;
}

/** "2026-11-22": the key of the day a moment falls in (UTC). */
export function dayOf(d: Date): string {
  return d.toISOString().slice(0, 10);
}

export type UsageCounters = Pick<typeof orgUsage.$inferSelect, "usedStorage" | "allocatedStorage" | "objectCount">;

/**
 * The day's closing state follows every change of the storage counters, in the change's
 * transaction (after its UPDATE of org_usage, so concurrent changes write in lock order).
 */
export async function snapshotDay(tx: Db, orgId: string, at: Date, c: UsageCounters): Promise<void> {
  const state = { usedStorage: c.usedStorage, allocatedStorage: c.allocatedStorage, objectCount: c.objectCount };
  await tx
    .insert(usageDaily)
    .values({ orgId, day: dayOf(at), ...state })
    .onConflictDoUpdate({ target: [usageDaily.orgId, usageDaily.day], set: state });
}

/**
 * Adds API calls to a day; a day's first row starts from the counters as they stand. (Egress
 * reaches the day through the rollup, egress-rollup.ts.)
 */
async function addCallsToDay(tx: Db, orgId: string, day: string, calls: number): Promise<void> {
  await tx.execute(sql`
    insert into usage_daily (org_id, day, used_storage, allocated_storage, object_count, api_calls)
    select org_id, ${day}::date, used_storage, allocated_storage, object_count, ${calls}
      from org_usage where org_id = ${orgId}
    on conflict (org_id, day) do update set api_calls = usage_daily.api_calls + excluded.api_calls`);
}

/**
 * The storage deltas of an organization not folded into its usage row yet (storage-deltas.ts),
 * used and reserved together: every quota check adds them, so a pending confirm or delete
 * counts as if it were folded.
 */
export const pendingStorage = (orgId: string | Placeholder) =>
  sql`(select coalesce(sum(d.used_storage + d.reserved_storage), 0) from storage_deltas d where d.org_id = ${orgId})`;

/**
 * A kept counter as it stands: the column of a `buckets b` or `org_usage u` row plus the same
 * column of the deltas not folded into it yet (storage-deltas.ts). A fragment of a statement
 * that selects from that row under that alias.
 */
export function keptCounter(row: "b" | "u", column: "object_count" | "used_storage"): SQL {
  const c = sql.raw(column);
  return row === "b"
    ? sql`(b.${c} + coalesce((select sum(d.${c}) from storage_deltas d where d.bucket_id = b.id), 0))`
    : sql`(u.${c} + coalesce((select sum(d.${c}) from storage_deltas d where d.org_id = u.org_id), 0))`;
}

/**
 * Reserves `bytes` of the organization's allocation for an upload, or refuses with 403
 * quota_exceeded. One conditional UPDATE: concurrent reservations can never overshoot.
 */
export async function reserveStorage(tx: Db, orgId: string, bytes: number): Promise<void> {
  const [ok] = await tx
    .update(orgUsage)
    .set({ reservedStorage: sql`${orgUsage.reservedStorage} + ${bytes}`, updatedAt: sql`now()` })
    .where(and(eq(orgUsage.orgId, orgId), sql`${orgUsage.usedStorage} + ${orgUsage.reservedStorage} + ${pendingStorage(orgId)} + ${bytes} <= ${orgUsage.allocatedStorage}`))
    .returning({ orgId: orgUsage.orgId });
  if (ok) return;
  throw await quotaExceeded(tx, orgId, bytes);
}

export type LiveUsage = UsageCounters & { reservedStorage: number };

/**
 * The organization's counters as they stand: its usage row plus the deltas not folded yet,
 * in one statement (one snapshot: a fold committing meanwhile moves amounts from the deltas
 * to the row, and the sums are the same either way). Undefined for an unknown organization.
 */
export async function liveUsage(db: Db, orgId: string): Promise<LiveUsage | undefined> {
  const [row] = rowsOf<{ used: string | number; reserved: string | number; allocated: string | number; objects: string | number }>(
    await db.execute(sql`
      select u.used_storage + coalesce(p.used, 0) as used, greatest(u.reserved_storage + coalesce(p.reserved, 0), 0) as reserved,
             u.allocated_storage as allocated, u.object_count + coalesce(p.objects, 0) as objects
        from org_usage u
        left join lateral (
          select sum(used_storage) as used, sum(reserved_storage) as reserved, sum(object_count) as objects
            from storage_deltas where org_id = u.org_id
        ) p on true
       where u.org_id = ${orgId}`),
  );
  if (!row) return undefined;
  return { usedStorage: Number(row.used), reservedStorage: Number(row.reserved), allocatedStorage: Number(row.allocated), objectCount: Number(row.objects) };
}

/** The 403 for a refused reservation, with the counters as they are now. */
export async function quotaExceeded(db: Db, orgId: string, bytes: number): Promise<AppError> {
  const u = await liveUsage(db, orgId);
  return new AppError("quota_exceeded", "This upload would exceed the organization's allocated storage", {
    requested: bytes,
    usedStorage: u?.usedStorage ?? 0,
    reservedStorage: u?.reservedStorage ?? 0,
    allocatedStorage: u?.allocatedStorage ?? 0,
  });
}

export async function releaseReservation(tx: Db, orgId: string, bytes: number): Promise<void> {
  if (bytes === 0) return;
  await tx
    .update(orgUsage)
    .set({ reservedStorage: sql`greatest(${orgUsage.reservedStorage} - ${bytes}, 0)`, updatedAt: sql`now()` })
    .where(eq(orgUsage.orgId, orgId));
}

/**
 * Estimated egress of a download or stream: the object's size, counted when the URL is
 * issued. One INSERT into the ledger, flagged pending, and nothing else: no upsert of the
 * organization's month or day row, which every download of the organization would queue
 * behind until commit. The rollup (egress-rollup.ts) folds pending events into the month
 * and the day; reads (report.ts) add what it has not folded yet, so totals stay exact.
 */
export async function recordEgress(
  db: Db,
  orgId: string,
  e: { kind: "download" | "stream" | "render"; bytes: number; at: Date; objectId: string; bucketId: string; key: string },
): Promise<void> {
  await recordUsageEvent(db, orgId, { type: e.kind, at: e.at, objectId: e.objectId, bucketId: e.bucketId, key: e.key, bytes: e.bytes, rollupPending: true });
}

/**
 * The live object a download or stream URL is for, with its egress counted. Same answers as
 * resolveLiveObject: 404 unless the object is live in the caller's organization, 403 outside a
 * restricted key's bucket; the event is counted only when the URL will be issued. With an
 * egress ledger (the server's) the event joins the next batched write (egress-ledger.ts) and the
 * route's only statement is this lookup; without one it is appended here.
 */
export async function resolveForEgress(
  deps: Pick<Deps, "db" | "egress">,
  caller: Pick<Caller, "orgId" | "bucketId">,
  objectId: string,
  kind: "download" | "stream",
  at: Date,
): Promise<{ id: string; bucketId: string; key: string; size: number; contentType: string }> {
  const [row] = await prepared(deps.db, "egress_object", (d) =>
    d
      .select({ id: mediaObjects.id, bucketId: mediaObjects.bucketId, key: mediaObjects.key, size: mediaObjects.size, contentType: mediaObjects.contentType })
      .from(mediaObjects)
      .where(and(eq(mediaObjects.id, sql.placeholder("id")), eq(mediaObjects.orgId, sql.placeholder("orgId")), isNull(mediaObjects.deletedAt)))
      .limit(1)
      .prepare("egress_object"),
  ).execute({ id: objectId, orgId: caller.orgId });
  if (!row) throw errors.notFound("Media object");
  assertBucketAllowed(caller, row.bucketId, "The media object");
  const event = { kind, at, objectId: row.id, bucketId: row.bucketId, key: row.key, bytes: row.size };
  if (deps.egress) deps.egress.add(caller.orgId, event);
  else await recordEgress(deps.db, caller.orgId, event);
  return row;
}

/**
 * API calls counted in memory (meter.ts), flushed per organization and day.
 *
 * Lock order: every writer of the day and month rows (this and the egress rollup) locks an
 * organization's day row before its month row. In opposite orders, two writers could each hold
 * one while waiting for the other, a deadlock PostgreSQL breaks only after a second.
 */
export async function addApiCalls(tx: Db, orgId: string, day: string, calls: number): Promise<void> {
  await addCallsToDay(tx, orgId, day, calls);
  // Through org_usage, so counts of an organization deleted meanwhile are dropped, not an error.
  await tx.execute(sql`
    insert into usage_monthly (org_id, month, api_calls)
    select org_id, ${`${day.slice(0, 7)}-01`}::date, ${calls} from org_usage where org_id = ${orgId}
    on conflict (org_id, month) do update set api_calls = usage_monthly.api_calls + excluded.api_calls`);
}
