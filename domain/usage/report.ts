import { and, desc, eq, lt, sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import type { UsageHistory, UsagePoint, UsageSummary } from "../../contract/usage.ts";
import { billingAccounts, orgUsage, usageDaily } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { readDb } from "../core/reads.ts";
import { freeTier } from "../billing/plans.ts";
import { dayOf, liveUsage, monthOf, type UsageCounters } from "./counters.ts";
import { windowStart } from "./events.ts";

/**
 * The month's egress and API calls: the counters plus the egress events the rollup has not
 * folded yet, in one statement (one snapshot: a rollup committing meanwhile moves bytes from
 * the events to the counter, and the sum is the same either way).
 */
async function monthTotals(deps: Deps, orgId: string, month: string): Promise<{ egressBytes: number; apiCalls: number }> {
  const [row] = rowsOf<{ egress: string | number; calls: string | number }>(
    await deps.db.execute(sql`
      select coalesce((select egress_bytes from usage_monthly where org_id = ${orgId} and month = ${month}::date), 0)
           + coalesce((select sum(bytes) from usage_events
                        where org_id = ${orgId} and rollup_pending
                          and at >= (${month}::date)::timestamp at time zone 'UTC'
                          and at < ((${month}::date + interval '1 month'))::timestamp at time zone 'UTC'), 0) as egress,
             coalesce((select api_calls from usage_monthly where org_id = ${orgId} and month = ${month}::date), 0) as calls`),
  );
  return { egressBytes: Number(row?.egress ?? 0), apiCalls: Number(row?.calls ?? 0) };
}

/** Read from the counters, never by scanning objects. */
export async function getUsage(deps: Deps, caller: Caller): Promise<UsageSummary> {
  deps = { ...deps, db: readDb(deps, caller.orgId, "usage") };
  // This instance's egress not yet written is written first, so the answer counts it.
  await deps.egress?.flush();
  const month = monthOf(deps.clock.now());
  const [usage, monthly, [account]] = await Promise.all([
    liveUsage(deps.db, caller.orgId),
    monthTotals(deps, caller.orgId, month),
    deps.db.select({ planKey: billingAccounts.planKey }).from(billingAccounts).where(eq(billingAccounts.orgId, caller.orgId)),
  ]);
  return {
    usedStorage: usage?.usedStorage ?? 0,
    reservedStorage: usage?.reservedStorage ?? 0,
    allocatedStorage: usage?.allocatedStorage ?? 0,
    objectCount: usage?.objectCount ?? 0,
    egressThisMonth: monthly.egressBytes,
    apiCallsThisMonth: monthly.apiCalls,
    month: month.slice(0, 7),
    plan: account?.planKey ?? freeTier(deps.config.plans).key,
  };
}

/**
 * One point per UTC day, oldest first, ending today: storage as the day closed, and the
 * day's egress and API calls. A day without activity closes as the day before it did.
 * Days before the organization's first recorded day are left out.
 */
export async function usageHistory(deps: Deps, caller: Caller, days: number): Promise<UsageHistory> {
  deps = { ...deps, db: readDb(deps, caller.orgId, "usage") };
  await deps.egress?.flush();
  const now = deps.clock.now();
  const from = dayOf(windowStart(now, days));
  const to = dayOf(now);
  const [windowRows, [before], [folded], pending] = await Promise.all([
    windowDays(deps, caller.orgId, from, to),
    deps.db
      .select()
      .from(usageDaily)
      .where(and(eq(usageDaily.orgId, caller.orgId), lt(usageDaily.day, from)))
      .orderBy(desc(usageDaily.day))
      .limit(1),
    deps.db.select().from(orgUsage).where(eq(orgUsage.orgId, caller.orgId)),
    pendingByDay(deps, caller.orgId),
  ]);
  // Day rows and the usage row hold what the rollup folded; a day closed with that plus the
  // pending deltas of that day and before (no row includes any pending delta).
  const pendingUpTo = (date: string) => {
    const upTo = { usedStorage: 0, objectCount: 0 };
    for (const p of pending) {
      if (p.day > date) break;
      upTo.usedStorage += p.usedStorage;
      upTo.objectCount += p.objectCount;
    }
    return upTo;
  };
  // Carried into the window from its last earlier row. An organization with no rows at all
  // predates this ledger: nothing has changed since, so its counters hold for every day.
  const rows = windowRows.filter((d) => d.state !== null);
  let state: UsageCounters | null = before ?? (rows.length === 0 && folded ? folded : null);
  const byDay = new Map(windowRows.map((d) => [d.day, d]));
  const data: UsagePoint[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) {
    const date = dayOf(new Date(t));
    const row = byDay.get(date);
    if (row?.state) state = row.state;
    if (!state) continue;
    const add = pendingUpTo(date);
    data.push({
      date,
      usedStorage: state.usedStorage + add.usedStorage,
      allocatedStorage: state.allocatedStorage,
      objectCount: state.objectCount + add.objectCount,
      egressBytes: row?.egressBytes ?? 0,
      apiCalls: row?.apiCalls ?? 0,
    });
  }
  return { from, to, data };
}

/** The organization's storage deltas not folded yet, summed per UTC day, oldest first. */
async function pendingByDay(deps: Deps, orgId: string): Promise<{ day: string; usedStorage: number; objectCount: number }[]> {
  const rows = rowsOf<{ day: string | Date; used: string | number; objects: string | number }>(
    await deps.db.execute(sql`
      select to_char((at at time zone 'UTC')::date, 'YYYY-MM-DD') as day, sum(used_storage) as used, sum(object_count) as objects
        from storage_deltas where org_id = ${orgId} group by 1 order by 1`),
  );
  return rows.map((r) => ({ day: String(r.day), usedStorage: Number(r.used), objectCount: Number(r.objects) }));
}

interface WindowDay {
  day: string;
  /** Storage as the day closed; null for a day known only from egress not yet rolled up. */
  state: UsageCounters | null;
  egressBytes: number;
  apiCalls: number;
}

/**
 * The window's day rows, each day's egress including events the rollup has not folded yet
 * (one statement, one snapshot, so nothing is counted twice or missed while it runs).
 */
async function windowDays(deps: Deps, orgId: string, from: string, to: string): Promise<WindowDay[]> {
  const rows = rowsOf<{
    day: string;
    has_row: boolean;
    used_storage: string | number | null;
    allocated_storage: string | number | null;
    object_count: string | number | null;
    egress: string | number;
    calls: string | number;
  }>(
    await deps.db.execute(sql`
      with d as (
        select * from usage_daily where org_id = ${orgId} and day >= ${from}::date and day <= ${to}::date
      ), p as (
        select (at at time zone 'UTC')::date as day, sum(bytes)::bigint as bytes from usage_events
         where org_id = ${orgId} and rollup_pending
           and at >= (${from}::date)::timestamp at time zone 'UTC'
           and at < ((${to}::date + 1))::timestamp at time zone 'UTC'
         group by 1
      )
      select to_char(coalesce(d.day, p.day), 'YYYY-MM-DD') as day, d.org_id is not null as has_row,
             d.used_storage, d.allocated_storage, d.object_count,
             coalesce(d.egress_bytes, 0) + coalesce(p.bytes, 0) as egress, coalesce(d.api_calls, 0) as calls
        from d full join p on p.day = d.day
       order by 1`),
  );
  return rows.map((r) => ({
    day: r.day,
    state: r.has_row ? { usedStorage: Number(r.used_storage), allocatedStorage: Number(r.allocated_storage), objectCount: Number(r.object_count) } : null,
    egressBytes: Number(r.egress),
    apiCalls: Number(r.calls),
  }));
}
