import type { Deps } from "../core/deps.ts";
import { addApiCalls, dayOf } from "./counters.ts";

/**
 * Counts API calls without a database write per request: calls add up in memory per
 * organization and UTC day (the day of the call, so a flush after midnight still books
 * them right), and a flush writes one upsert per organization and day. Counts a flush
 * could not write are put back and retried; `stop()` flushes what is left, so a clean
 * shutdown loses nothing. A crash loses at most one interval.
 */
export class ApiCallMeter {
  private pending = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly deps: Pick<Deps, "db" | "clock" | "log">,
    readonly intervalMs = 5_000,
  ) {}

  record(orgId: string): void {
    const k = `${orgId}|${dayOf(this.deps.clock.now())}`;
    this.pending.set(k, (this.pending.get(k) ?? 0) + 1);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
  }

  /** Writes every pending count; resolves once they are committed (or put back on failure). */
  async flush(): Promise<void> {
    // One flush at a time; a call during a flush waits for it, then writes what came since.
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.write(batch).finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  private async write(batch: Map<string, number>): Promise<void> {
    for (const [k, calls] of batch) {
      const [orgId, day] = k.split("|") as [string, string];
      try {
        await this.deps.db.transaction((tx) => addApiCalls(tx, orgId, day, calls));
      } catch (err) {
        this.pending.set(k, (this.pending.get(k) ?? 0) + calls);
        this.deps.log.warn("flushing API call counts failed; will retry", { orgId, error: String(err) });
      }
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}
