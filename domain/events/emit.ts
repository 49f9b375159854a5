import { type SQL, sql } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";
import type { EventData, EventType } from "../../contract/events.ts";

/**
 * Events go out through the outbox, like jobs: written in the transaction of the change they
 * report, so an event is sent if and only if its change committed. One statement per emission:
 * the organization's enabled endpoints that want the type are found, and per endpoint a
 * delivery row and its first `webhooks.deliver` job are written. An organization without
 * endpoints (most of them, most of the time) pays one index probe and stores nothing.
 */

export interface Emission<T extends EventType> {
  orgId: string;
  type: T;
  /** One event per entry (e.g. one media.updated per object a deleted tag was on). */
  data: EventData<T> | EventData<T>[];
  at: Date;
  /** Send to this endpoint only, whatever it subscribes to (the test event). */
  endpointId?: string;
}

/**
 * The emission as common table expressions, to run inside another statement (the worker's
 * one-statement writes). `when` (SQL over that statement's own CTEs) must hold for anything
 * to be written; `prefix` keeps the names apart when a statement emits twice.
 */
export function eventCtes<T extends EventType>(e: Emission<T>, opts: { when?: SQL; prefix?: string } = {}): SQL {
  const p = opts.prefix ?? "ev";
  const name = (n: string) => sql.raw(`${p}_${n}`);
  const items = Array.isArray(e.data) ? e.data : [e.data];
  const timestamp = e.at.toISOString();
  const payloads = JSON.stringify(items.map((data) => ({ type: e.type, timestamp, data })));
  const wanted = e.endpointId
    ? sql`id = ${e.endpointId}::uuid`
    : sql`enabled and (cardinality(event_types) = 0 or ${e.type}::text = any(event_types))`;
  return sql`
    ${name("targets")} as (
      select id from webhook_endpoints
      where org_id = ${e.orgId}::uuid and ${wanted}${opts.when ? sql` and ${opts.when}` : sql``}
    ),
    ${name("events")} as (
      insert into webhook_events (org_id, type, payload, created_at)
      select ${e.orgId}::uuid, ${e.type}::text, p.value::json, ${timestamp}::timestamptz
      from json_array_elements(${payloads}::text::json) as p(value)
      where exists (select 1 from ${name("targets")})
      returning id
    ),
    ${name("deliveries")} as (
      insert into webhook_deliveries (org_id, event_id, endpoint_id)
      select ${e.orgId}::uuid, ev.id, t.id from ${name("events")} ev cross join ${name("targets")} t
      returning id
    ),
    ${name("jobs")} as (
      insert into job_outbox (name, payload)
      select 'webhooks.deliver', jsonb_build_object('orgId', ${e.orgId}::text, 'deliveryId', d.id::text, 'attempt', 1)
      from ${name("deliveries")} d
      returning 1
    )`;
}

/**
 * Writes the event(s) in `tx`, the change's own transaction. Returns the number of deliveries
 * written; when it is not 0 the caller kicks the job dispatcher after committing
 * (`deps.jobs.kick()`), as for any job.
 */
export async function emitEvent<T extends EventType>(tx: Db, e: Emission<T>): Promise<number> {
  if (Array.isArray(e.data) && e.data.length === 0) return 0;
  const result = await tx.execute(sql`with ${eventCtes(e)} select (select count(*) from ev_deliveries)::int as deliveries`);
  return Number(rowsOf<{ deliveries: number }>(result)[0]?.deliveries ?? 0);
}
