import { and, asc, desc, eq, gte, lt, lte } from "drizzle-orm";
import type { UsageHistory, UsagePoint, UsageSummary } from "../../contract/usage.ts";
import { billingAccounts, orgUsage, usageDaily, usageMonthly } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { freeTier } from "../billing/plans.ts";
import { dayOf, monthOf, type UsageCounters } from "./counters.ts";
import { windowStart } from "./events.ts";

/** Read from the counters, never by scanning objects. */
export async function getUsage(deps: Deps, caller: Caller): Promise<UsageSummary> {
  const month = monthOf(deps.clock.now());
  const [[usage], [monthly], [account]] = await Promise.all([
    deps.db.select().from(orgUsage).where(eq(orgUsage.orgId, caller.orgId)),
    deps.db.select().from(usageMonthly).where(and(eq(usageMonthly.orgId, caller.orgId), eq(usageMonthly.month, month))),
    deps.db.select({ planKey: billingAccounts.planKey }).from(billingAccounts).where(eq(billingAccounts.orgId, caller.orgId)),
  ]);
  return {
    usedStorage: usage?.usedStorage ?? 0,
    reservedStorage: usage?.reservedStorage ?? 0,
    allocatedStorage: usage?.allocatedStorage ?? 0,
    objectCount: usage?.objectCount ?? 0,
    egressThisMonth: monthly?.egressBytes ?? 0,
    apiCallsThisMonth: monthly?.apiCalls ?? 0,
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
  const now = deps.clock.now();
  const from = dayOf(windowStart(now, days));
  const to = dayOf(now);
  const [rows, [before], [current]] = await Promise.all([
    deps.db
      .select()
      .from(usageDaily)
      .where(and(eq(usageDaily.orgId, caller.orgId), gte(usageDaily.day, from), lte(usageDaily.day, to)))
      .orderBy(asc(usageDaily.day)),
    deps.db
      .select()
      .from(usageDaily)
      .where(and(eq(usageDaily.orgId, caller.orgId), lt(usageDaily.day, from)))
      .orderBy(desc(usageDaily.day))
      .limit(1),
    deps.db.select().from(orgUsage).where(eq(orgUsage.orgId, caller.orgId)),
  ]);
  // Carried into the window from its last earlier row. An organization with no rows at all
  // predates this ledger: nothing has changed since, so its counters hold for every day.
  let state: UsageCounters | null = before ?? (rows.length === 0 && current ? current : null);
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const data: UsagePoint[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) {
    const date = dayOf(new Date(t));
    const row = byDay.get(date);
    if (row) state = row;
    if (!state) continue;
    data.push({
      date,
      usedStorage: state.usedStorage,
      allocatedStorage: state.allocatedStorage,
      objectCount: state.objectCount,
      egressBytes: row?.egressBytes ?? 0,
      apiCalls: row?.apiCalls ?? 0,
    });
  }
  return { from, to, data };
}
