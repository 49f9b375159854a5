import type { Deps } from "../core/deps.ts";
import { recordEgress } from "../usage/counters.ts";
import type { RenderResult } from "./render.ts";

/** Egress of renders not yet written, per database (one server), per organization and object. */
const pendingEgress = new WeakMap<Deps["db"], Map<string, { orgId: string; objectId: string; bucketId: string; key: string; bytes: number }>>();

/** Renders' egress is written at most this often per object: a cached render is answered in about a millisecond, a usage transaction costs more. */
export const EGRESS_FLUSH_MS = 1000;

/**
 * A render answered with its bytes counts as egress, as downloads do. Summed in memory per
 * object and written within EGRESS_FLUSH_MS (a usage event per object and flush, not per
 * request); a process killed in that window loses at most that second of counts.
 */
export function countRenderEgress(deps: Deps, r: RenderResult, orgId: string): void {
  let batch = pendingEgress.get(deps.db);
  if (!batch) pendingEgress.set(deps.db, (batch = new Map()));
  const id = `${orgId}|${r.objectId}`;
  const entry = batch.get(id);
  if (entry) {
    entry.bytes += r.size;
    return;
  }
  const first = batch.size === 0;
  batch.set(id, { orgId, objectId: r.objectId, bucketId: r.bucketId, key: r.objectKey, bytes: r.size });
  if (first) setTimeout(() => void flushRenderEgress(deps), EGRESS_FLUSH_MS).unref?.();
}

export async function flushRenderEgress(deps: Deps): Promise<void> {
  const batch = pendingEgress.get(deps.db);
  if (!batch || batch.size === 0) return;
  const entries = [...batch.values()];
  batch.clear();
  const at = deps.clock.now();
  for (const e of entries) {
    await recordEgress(deps.db, e.orgId, { kind: "render", bytes: e.bytes, at, objectId: e.objectId, bucketId: e.bucketId, key: e.key }).catch((err) =>
      deps.log.warn("counting render egress failed", { objectId: e.objectId, error: String(err) }),
    );
  }
}
