import type { Deps } from "../core/deps.ts";
import { recordEgress } from "../usage/counters.ts";
import type { RenderResult } from "./render.ts";

/**
 * A render answered with its bytes counts as egress, as downloads do. On a server the event
 * joins the egress ledger's next batch (usage/egress-ledger.ts), where the renders of one
 * object are summed into one event; without a ledger it is appended at once.
 */
export function countRenderEgress(deps: Pick<Deps, "db" | "egress" | "clock" | "log">, r: RenderResult, orgId: string): void {
  const e = { kind: "render" as const, bytes: r.size, at: deps.clock.now(), objectId: r.objectId, bucketId: r.bucketId, key: r.objectKey };
  if (deps.egress) deps.egress.add(orgId, e);
  else void recordEgress(deps.db, orgId, e).catch((err) => deps.log.warn("counting render egress failed", { objectId: r.objectId, error: String(err) }));
}
