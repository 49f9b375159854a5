import { sql } from "drizzle-orm";
import type { Deps } from "../core/deps.ts";

/** Finished deliveries (and events no delivery needs) are kept this long for inspection and redelivery. */
export const EVENT_RETENTION_DAYS = 30;

export async function pruneEvents(deps: Pick<Deps, "db">): Promise<void> {
  await deps.db.execute(sql`
    delete from webhook_deliveries where id in (
      select id from webhook_deliveries
      where status <> 'pending' and created_at < now() - make_interval(days => ${EVENT_RETENTION_DAYS}) limit 10000)`);
  await deps.db.execute(sql`
    delete from webhook_events e where e.id in (
      select id from webhook_events where created_at < now() - make_interval(days => ${EVENT_RETENTION_DAYS}) limit 10000)
      and not exists (select 1 from webhook_deliveries d where d.event_id = e.id)`);
}
