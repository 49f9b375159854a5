import { and, eq, sql } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";
import { buckets, orgUsage, storageDeltas } from "../../db/schema/index.ts";
import { dayOf, keptCounter, snapshotDay, type UsageCounters } from "./counters.ts";

type UsageRow = typeof orgUsage.$inferSelect;
import { announceThresholds, LOWEST_THRESHOLD_PCT } from "./thresholds.ts";

/** A change of an organization's storage counters: bytes used, bytes reserved, live objects of one bucket. */
export interface StorageChange {
  bucketId: string;
  bytes: number;
  reserved?: number;
  objects: number;
}

/**
 * Records a change by appending a row, without touching the organization's usage row: the
 * confirms and deletes of one organization do not queue behind each other's commits. Reads
 * add the pending rows (counters.ts liveUsage, pendingStorage), so totals stay exact; the
 * rollup folds them in (usage-rollup.ts). Nothing is lost on a crash: the row commits with
 * the change it counts.
 */
export async function appendStorageDelta(tx: Db, orgId: string, c: StorageChange, at: Date): Promise<void> {
  if (c.bytes === 0 && !c.reserved && c.objects === 0) return;
  await tx.insert(storageDeltas).values({ orgId, bucketId: c.bucketId, usedStorage: c.bytes, reservedStorage: c.reserved ?? 0, objectCount: c.objects, at });
}

/**
 * Folds the organization's pending deltas, and `change` if given, into its usage row and its
 * buckets' counts; writes each touched day's closing state and announces threshold crossings
 * of the row. The usage row is locked first, as every writer of an organization's counters
 * does (reservations, billing, restores, bucket deletion): concurrent folds of one organization
 * run one after another, the second finding the deltas gone, and no two writers wait on each
 * other in opposite orders. The lock is held until the caller's transaction ends. Returns the
 * counters after, or null for an unknown organization.
 */
export async function foldStorage(tx: Db, orgId: string, at: Date, change?: StorageChange): Promise<UsageRow | null> {
  const [held] = await tx.select().from(orgUsage).where(eq(orgUsage.orgId, orgId)).for("no key update");
  if (!held) return null;
  const pending = await tx.delete(storageDeltas).where(eq(storageDeltas.orgId, orgId)).returning();
  const changes = pending.map((d) => ({ bucketId: d.bucketId, bytes: d.usedStorage, reserved: d.reservedStorage, objects: d.objectCount, at: d.at }));
  if (change) changes.push({ bucketId: change.bucketId, bytes: change.bytes, reserved: change.reserved ?? 0, objects: change.objects, at });
  if (changes.length === 0) return held;
  changes.sort((a, b) => a.at.getTime() - b.at.getTime());

  const sum = (f: (c: (typeof changes)[number]) => number) => changes.reduce((n, c) => n + f(c), 0);
  const bytes = sum((c) => c.bytes);
  const reserved = sum((c) => c.reserved);
  const objects = sum((c) => c.objects);
  const perBucket = new Map<string, number>();
  for (const c of changes) perBucket.set(c.bucketId, (perBucket.get(c.bucketId) ?? 0) + c.objects);
  for (const [bucketId, n] of [...perBucket].sort(([a], [b]) => a.localeCompare(b))) {
    if (n !== 0) await tx.update(buckets).set({ objectCount: sql`${buckets.objectCount} + ${n}` }).where(and(eq(buckets.id, bucketId), eq(buckets.orgId, orgId)));
  }
  const [after] = await tx
    .update(orgUsage)
    .set({
      usedStorage: sql`${orgUsage.usedStorage} + ${bytes}`,
      reservedStorage: sql`greatest(${orgUsage.reservedStorage} + ${reserved}, 0)`,
      objectCount: sql`${orgUsage.objectCount} + ${objects}`,
      updatedAt: sql`now()`,
    })
    .where(eq(orgUsage.orgId, orgId))
    .returning();
  if (!after) return null;

  // Each day the changes fall in closes as the counters stood after its last change.
  const state = { usedStorage: after.usedStorage - bytes, allocatedStorage: after.allocatedStorage, objectCount: after.objectCount - objects };
  const before = { ...state };
  let dayMoved = false;
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i]!;
    state.usedStorage += c.bytes;
    state.objectCount += c.objects;
    dayMoved ||= c.bytes !== 0 || c.objects !== 0;
    const lastOfDay = i === changes.length - 1 || dayOf(changes[i + 1]!.at) !== dayOf(c.at);
    if (lastOfDay && dayMoved) await snapshotDay(tx, orgId, c.at, state);
    if (lastOfDay) dayMoved = false;
  }
  if (bytes > 0) await announceThresholds(tx, orgId, before, after, at);
  return after;
}

/**
 * Whether growing used storage by `growth` brings the organization to a share of its allocation
 * where something must happen at once: a threshold announced (from 80%) or capacity bought
 * (its auto-capacity threshold). Such a change is folded under the lock (foldStorage) rather
 * than appended, so the announcement and the purchase see exact counters and happen once. A
 * read without a lock: two appended changes that only together cross a line are caught by the
 * rollup's fold, a couple of seconds later.
 */
export async function nearLimit(db: Db, orgId: string, growth: number): Promise<boolean> {
  if (growth <= 0) return false;
  const [row] = rowsOf<{ used: string | number; allocated: string | number; pct: number | null }>(
    await db.execute(sql`
      select ${keptCounter("u", "used_storage")} as used,
             u.allocated_storage as allocated,
             (select a.auto_capacity_threshold_pct from billing_accounts a where a.org_id = u.org_id and a.auto_capacity_enabled) as pct
        from org_usage u where u.org_id = ${orgId}`),
  );
  if (!row) return false;
  const pct = Math.min(LOWEST_THRESHOLD_PCT, row.pct ?? LOWEST_THRESHOLD_PCT);
  return (BigInt(row.used) + BigInt(growth)) * 100n >= BigInt(pct) * BigInt(row.allocated);
}

/** Organizations folded per rollup pass: bounds one pass's work. */
export const STORAGE_ROLLUP_ORGS = 200;

/**
 * Folds the pending deltas of up to `limit` organizations, each in its own transaction
 * (`afterFold` runs inside it with the counters after: auto-capacity). Returns how many
 * organizations had deltas.
 */
export async function rollUpStorage(
  db: Db,
  at: Date,
  afterFold?: (tx: Db, orgId: string, after: UsageCounters) => Promise<void>,
  limit = STORAGE_ROLLUP_ORGS,
): Promise<number> {
  const orgs = rowsOf<{ org_id: string }>(await db.execute(sql`select distinct org_id from storage_deltas limit ${limit}`));
  for (const { org_id } of orgs) {
    await db.transaction(async (tx) => {
      const after = await foldStorage(tx, org_id, at);
      if (after && afterFold) await afterFold(tx, org_id, after);
    });
  }
  return orgs.length;
}
