import { and, count, desc, eq, gte, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { UsageEvent, UsageEventType } from "../../contract/usage.ts";
import { usageEvents } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { type Page, page } from "../core/pagination.ts";

export interface UsageEventInput {
  type: UsageEventType;
  at: Date;
  objectId?: string | null;
  bucketId?: string | null;
  key?: string | null;
  bytes?: number | null;
  delta?: number | null;
  amountCents?: number | null;
  details?: Record<string, unknown>;
  /** Egress still to be folded into the counters (egress-rollup.ts). */
  rollupPending?: boolean;
}

/** Appends to the ledger; call it inside the transaction of the change it records. */
export async function recordUsageEvent(tx: Db, orgId: string, e: UsageEventInput): Promise<void> {
  await tx.insert(usageEvents).values({
    orgId,
    type: e.type,
    at: e.at,
    objectId: e.objectId ?? null,
    bucketId: e.bucketId ?? null,
    key: e.key ?? null,
    bytes: e.bytes ?? null,
    delta: e.delta ?? null,
    amountCents: e.amountCents ?? null,
    details: e.details ?? {},
    rollupPending: e.rollupPending ?? false,
  });
}

/** The ledger of the last `days` days (today counts as one), newest first. */
export async function listUsageEvents(
  deps: Deps,
  caller: Caller,
  q: { days: number; limit: number; offset: number; type?: UsageEventType | undefined },
): Promise<Page<UsageEvent>> {
  // This instance's egress events not yet written are written first, so the page lists them.
  await deps.egress?.flush();
  const where: SQL[] = [eq(usageEvents.orgId, caller.orgId), gte(usageEvents.at, windowStart(deps.clock.now(), q.days))];
  if (q.type) where.push(eq(usageEvents.type, q.type));
  // A bucket-restricted key sees its bucket's events only, not the organization's billing.
  if (caller.bucketId) where.push(eq(usageEvents.bucketId, caller.bucketId));
  const filter = and(...where);
  const [rows, [{ total } = { total: 0 }]] = await Promise.all([
    deps.db.select().from(usageEvents).where(filter).orderBy(desc(usageEvents.at), desc(usageEvents.seq)).limit(q.limit).offset(q.offset),
    deps.db.select({ total: count() }).from(usageEvents).where(filter),
  ]);
  const data = rows.map((r) => ({
    id: r.id,
    type: r.type,
    at: r.at.toISOString(),
    objectId: r.objectId,
    bucketId: r.bucketId,
    key: r.key,
    bytes: r.bytes,
    delta: r.delta,
    amountCents: r.amountCents,
    details: r.details,
  }));
  return page(data, total, q.offset);
}

/** Midnight UTC starting the window of `days` days that ends today. */
export function windowStart(now: Date, days: number): Date {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(today - (days - 1) * 86_400_000);
}
