import { sql } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";

/** Pending egress events folded per statement: bounds one rollup transaction's work and locks. */
export const ROLLUP_BATCH = 5_000;

/**
 * Folds pending egress events into usage_monthly and usage_daily and clears their flag, in one
 * statement: either an event is counted in the counters or it is still pending, never both
 * and never neither. `for update skip locked` lets every instance run it at once. Returns how
 * many events it folded. A day's first row takes its storage columns from the last earlier
 * day row (a day without a row closed as the one before it did), else from org_usage.
 *
 * Rows are locked in one order by every writer of these counters (see addApiCalls in
 * counters.ts): day rows before month rows, organizations in id order.
 */
export async function rollUpEgress(db: Db, limit = ROLLUP_BATCH): Promise<number> {
  const rows = await db.execute(sql`
    with batch as (
      update usage_events e set rollup_pending = false
       where e.id in (select id from usage_events where rollup_pending order by seq limit ${limit} for update skip locked)
      returning e.org_id, e.at, e.bytes
    ), by_day as (
      select org_id, (at at time zone 'UTC')::date as day, sum(coalesce(bytes, 0))::bigint as bytes, count(*)::int as n
        from batch group by 1, 2
    ), daily as (
      insert into usage_daily (org_id, day, used_storage, allocated_storage, object_count, egress_bytes)
      select d.org_id, d.day,
             coalesce(prev.used_storage, u.used_storage, 0), coalesce(prev.allocated_storage, u.allocated_storage, 0),
             coalesce(prev.object_count, u.object_count, 0), d.bytes
        from by_day d
        left join org_usage u on u.org_id = d.org_id
        left join lateral (
          select used_storage, allocated_storage, object_count from usage_daily p
           where p.org_id = d.org_id and p.day < d.day order by p.day desc limit 1
        ) prev on true
       order by d.org_id, d.day
      on conflict (org_id, day) do update set egress_bytes = usage_daily.egress_bytes + excluded.egress_bytes
      returning 1
    ), monthly as (
      -- Reading daily's rows makes it run to the end first: PostgreSQL otherwise runs the
      -- sub-statements of a WITH in an order it does not promise.
      insert into usage_monthly (org_id, month, egress_bytes)
      select org_id, date_trunc('month', day)::date, sum(bytes)::bigint from by_day
       where (select count(*) from daily) >= 0
       group by 1, 2 order by 1, 2
      on conflict (org_id, month) do update set egress_bytes = usage_monthly.egress_bytes + excluded.egress_bytes
    )
    select coalesce(sum(n), 0)::int as folded from by_day`);
  return Number(rowsOf<{ folded: number }>(rows)[0]?.folded ?? 0);
}
