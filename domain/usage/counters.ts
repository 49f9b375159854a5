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
 * What the organization's uploads count beyond the bytes they reserved (`bound` over `bytes`:
 * upload URLs without a size, multipart parts): with reserved_storage, the bytes its
 * unconfirmed uploads may leave in storage. Upload URLs for one key count once, the largest:
 * the key holds one object whichever URL is used (each is signed for what the key holds, so
 * after one PUT the others are refused), and a client that presigns again to retry costs
 * nothing more. Each multipart upload counts apart: its parts are kept apart until completed.
 *
 * A sum over its open uploads, never a kept counter, so a row written or deleted by an instance
 * that knows nothing of `bound` (an earlier release, during a rolling upgrade) can never leave
 * it wrong: such rows count their `bytes` only. `also`: rows about to be added, as
 * (bucket_id, key, upload_id, extra).
 */
export const unconfirmedExtra = (orgId: string | Placeholder, also?: SQL) => sql`(select coalesce(sum(k.extra), 0) from (
    select max(x.extra) as extra from (
      select r.bucket_id, r.key, r.upload_id, r.bound - r.bytes as extra from upload_reservations r where r.org_id = ${orgId} and r.bound > r.bytes
      ${also ? sql`union all ${also}` : sql``}
    ) x group by x.bucket_id, x.key, x.upload_id
  ) k)`;

/**
 * The rule for bytes not confirmed yet, a fragment of a statement that updates (and so locks)
 * the organization's `org_usage` row: what is used and reserved (with `reserving` more), and
 * what uploads count beyond their reservations (with the rows `also` about to be added),
 * stays within the allocation plus `slack` (one upload URL without a size,
 * UPLOAD_UNSIZED_MAX_BYTES). The slack is what keeps `size` optional: an organization with
 * nothing outstanding can always presign without one, even with its allocation full.
 */
export const unconfirmedFits = (orgId: string | Placeholder, reserving: SQL | Placeholder | number, slack: Placeholder | number, also?: SQL) =>
  sql`org_usage.used_storage + org_usage.reserved_storage + ${pendingStorage(orgId)} + ${unconfirmedExtra(orgId, also)} + ${reserving} <= org_usage.allocated_storage + ${slack}`;

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
 * Locks the organization's usage row in a statement of its own, before a quota check in the same
 * transaction. A check that is one conditional UPDATE adding the pending deltas, and that finds
 * the row held by a fold, is evaluated again by PostgreSQL on the row the fold wrote (the
 * deltas now in its counters) while the statement's snapshot still sees the deltas the fold
 * deleted: counted twice, a spurious 403, or a deletion's bytes given as room twice. After the
 * lock, the check's statement starts from a snapshot in which any fold is complete.
 */
export async function lockUsage(tx: Db, orgId: string): Promise<void> {
  await tx.execute(sql`select 1 from org_usage where org_id = ${orgId} for no key update`);
}

/**
 * Reserves `bytes` of the organization's allocation for an upload, or refuses with 403
 * quota_exceeded. One conditional UPDATE, after the row's lock (lockUsage), in the caller's
 * transaction: concurrent reservations can never overshoot.
 */
export async function reserveStorage(tx: Db, orgId: string, bytes: number): Promise<void> {
  await lockUsage(tx, orgId);
  const [ok] = await tx
    .update(orgUsage)
    .set({ reservedStorage: sql`${orgUsage.reservedStorage} + ${bytes}`, updatedAt: sql`now()` })
    .where(and(eq(orgUsage.orgId, orgId), sql`${orgUsage.usedStorage} + ${orgUsage.reservedStorage} + ${pendingStorage(orgId)} + ${bytes} <= ${orgUsage.allocatedStorage}`))
    .returning({ orgId: orgUsage.orgId });
  if (ok) return;
  throw await quotaExceeded(tx, orgId, bytes);
}

/**
 * Reserves `declared` bytes of the allocation for an upload that counts `counted` (at least
 * `declared`) against its unconfirmed bytes, or refuses with 403 quota_exceeded saying which
 * rule refused: the allocation (reserveStorage's), or too much unconfirmed (unconfirmedFits).
 */
export async function reserveCounted(tx: Db, orgId: string, r: { declared: number; counted: number; slack: number }): Promise<void> {
  await lockUsage(tx, orgId);
  const [ok] = await tx
    .update(orgUsage)
    .set({ reservedStorage: sql`${orgUsage.reservedStorage} + ${r.declared}`, updatedAt: sql`now()` })
    .where(
      and(
        eq(orgUsage.orgId, orgId),
        sql`${orgUsage.usedStorage} + ${orgUsage.reservedStorage} + ${pendingStorage(orgId)} + ${r.declared} <= ${orgUsage.allocatedStorage}`,
        unconfirmedFits(orgId, r.declared, r.slack),
      ),
    )
    .returning({ orgId: orgUsage.orgId });
  if (ok) return;
  throw await uploadRefusal(tx, orgId, r);
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

/** The uploads of an organization not confirmed yet: how many, and the bytes they count (unconfirmedExtra). */
export async function unconfirmedUploads(db: Db, orgId: string): Promise<{ uploads: number; bytes: number }> {
  const [row] = rowsOf<{ uploads: string | number; bytes: string | number }>(
    await db.execute(
      sql`select count(*) as uploads, coalesce(sum(bytes), 0) + ${unconfirmedExtra(orgId)} as bytes from upload_reservations where org_id = ${orgId}`,
    ),
  );
  return { uploads: Number(row?.uploads ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/**
 * The 403 for an upload URL refused: past the allocation when its declared size does not fit
 * (quotaExceeded), else because the organization has too much unconfirmed, with what to do.
 */
export async function uploadRefusal(db: Db, orgId: string, r: { declared: number; counted: number; slack: number }): Promise<AppError> {
  const u = await liveUsage(db, orgId);
  if (!u || u.usedStorage + u.reservedStorage + r.declared > u.allocatedStorage) return quotaExceeded(db, orgId, r.declared);
  const open = await unconfirmedUploads(db, orgId);
  return new AppError(
    "quota_exceeded",
    `${open.uploads} upload${open.uploads === 1 ? "" : "s"} of this organization ${open.uploads === 1 ? "is" : "are"} presigned and not confirmed, counting ${open.bytes} bytes ` +
      `(an upload URL without a size, or a multipart part not yet stored, counts up to ${r.slack}): with this one they would pass the free allocation by more than that. ` +
      "Confirm the uploads that are done, abort unfinished multipart uploads, or wait for the rest to expire, then presign again",
    {
      requested: r.counted,
      unconfirmedUploads: open.uploads,
      unconfirmedBytes: open.bytes,
      unsizedMaxBytes: r.slack,
      usedStorage: u.usedStorage,
      reservedStorage: u.reservedStorage,
      allocatedStorage: u.allocatedStorage,
    },
  );
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
