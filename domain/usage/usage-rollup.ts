import type { Db } from "../../db/client.ts";
import type { Deps } from "../core/deps.ts";
import type { UsageCounters } from "./counters.ts";
import { ROLLUP_BATCH, rollUpEgress } from "./egress-rollup.ts";
import { rollUpStorage, STORAGE_ROLLUP_ORGS } from "./storage-deltas.ts";

/**
 * Runs the rollups every `intervalMs` until nothing is pending: egress events into the month
 * and day rows (egress-rollup.ts), storage deltas into the organizations' usage rows and their
 * buckets (storage-deltas.ts). Only background work touches the per-organization counter rows
 * on these paths; a request appends its row and returns (download and stream URLs hand theirs
 * to the egress ledger, which writes them in batches: egress-ledger.ts). Nothing written is lost
 * on a crash: the rows are committed with what they count, and whatever a rollup had not folded
 * is folded by the next one (here or on another instance). Reads add what is still pending, so
 * the totals are exact at any moment.
 */
export class UsageRollup {
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly deps: Pick<Deps, "db" | "log" | "clock">,
    /** Runs inside each organization's fold with its counters after (auto-capacity). */
    private readonly afterFold?: (tx: Db, orgId: string, after: UsageCounters) => Promise<void>,
    readonly intervalMs = 2_000,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref?.();
  }

  /** Folds everything pending now; one pass at a time per instance. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    this.running = this.drain().finally(() => {
      this.running = null;
    });
    await this.running;
  }

  private async drain(): Promise<void> {
    try {
      while ((await rollUpEgress(this.deps.db)) === ROLLUP_BATCH);
    } catch (err) {
      this.deps.log.warn("egress rollup failed; the events stay pending and are folded next time", { error: String(err) });
    }
    try {
      while ((await rollUpStorage(this.deps.db, this.deps.clock.now(), this.afterFold)) === STORAGE_ROLLUP_ORGS);
    } catch (err) {
      this.deps.log.warn("storage rollup failed; the deltas stay pending and are folded next time", { error: String(err) });
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}
