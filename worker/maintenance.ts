import type { Deps } from "../domain/core/deps.ts";
import { schedulePurges } from "../domain/media/media.ts";
import { sweepExpiredReservations } from "../domain/media/uploads.ts";
import { pruneOutbox } from "./outbox.ts";
import { pruneAudit } from "../domain/audit/audit.ts";
import { pruneEvents } from "../domain/events/retention.ts";
import { sweepOAuth } from "../domain/access/oauth-sweep.ts";
import { planPictureBackfills } from "../domain/media/picture-backfill.ts";
import { answerCacheFor } from "../domain/search/answer-cache.ts";

/**
 * Periodic housekeeping: expired upload reservations are released, soft-deleted objects past
 * retention are queued for purge, old outbox rows, audit entries and webhook deliveries are deleted,
 * and so are expired OAuth codes and tokens and OAuth clients never used, and the search change rows no kept answer can need. Safe to run on every instance at once.
 */
export function startMaintenance(deps: Deps, everyMs = 60_000): { stop(): Promise<void>; runOnce(): Promise<void> } {
  let running: Promise<void> | null = null;
  const runOnce = async () => {
    try {
      await sweepExpiredReservations(deps);
      await schedulePurges(deps);
      await pruneOutbox(deps);
      await pruneAudit(deps);
      await pruneEvents(deps);
      await sweepOAuth(deps);
      await answerCacheFor(deps.db).housekeep(deps.db);
    } catch (err) {
      deps.log.warn("maintenance pass failed", { error: String(err) });
    }
  };
  // Once per start: organizations with pictures stored before they were hashed get their backfill run.
  void planPictureBackfills(deps).catch((err) => deps.log.warn("starting picture backfills failed", { error: String(err) }));
  const timer = setInterval(() => {
    running ??= runOnce().finally(() => {
      running = null;
    });
  }, everyMs);
  return {
    runOnce,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
