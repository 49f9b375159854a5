import { AppError } from "../core/errors.ts";

/**
 * At most `limit` pieces of one kind of expensive work (a full-text search, a render) running at
 * once for one organization, in this process (2026 attack run: twenty searches of one organization held
 * every connection of the pool, and another organization's list waited 13 s). The pool is per
 * process, so the cap is too: with `limit` below the pool's size, one organization cannot take
 * every connection, whatever its rate limit allows.
 *
 * Work over the cap waits up to `waitMs` for a slot, in arrival order (a short burst is
 * smoothed, not refused); past that it is refused with 429 `rate_limited` and `Retry-After: 1`.
 * A waiting request holds no connection.
 */
export class OrgConcurrency {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(
    /** What the work is called in the refusal ("searches", "renders"). */
    private readonly what: string,
    private readonly limit: number,
    private readonly waitMs: number,
  ) {}

  /** Runs `work` in one of `orgId`'s slots, once one is free. */
  async run<T>(orgId: string, work: () => Promise<T>): Promise<T> {
    await this.acquire(orgId);
    try {
      return await work();
    } finally {
      this.release(orgId);
    }
  }

  /** Work of `orgId` running now (tests, metrics). */
  inFlight(orgId: string): number {
    return this.running.get(orgId) ?? 0;
  }

  private async acquire(orgId: string): Promise<void> {
    const n = this.running.get(orgId) ?? 0;
    if (n < this.limit) {
      this.running.set(orgId, n + 1);
      return;
    }
    const queue = this.waiting.get(orgId) ?? [];
    this.waiting.set(orgId, queue);
    const admitted = await new Promise<boolean>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const i = queue.indexOf(wake);
        if (i >= 0) queue.splice(i, 1);
        if (queue.length === 0 && this.waiting.get(orgId) === queue) this.waiting.delete(orgId);
        resolve(false);
      }, this.waitMs);
      queue.push(wake);
    });
    // A woken waiter inherits the slot its waker released: the count did not change.
    if (!admitted) throw tooMany(this.what, this.limit);
  }

  private release(orgId: string): void {
    const queue = this.waiting.get(orgId);
    const next = queue?.shift();
    if (next) {
      if (queue!.length === 0) this.waiting.delete(orgId);
      next();
      return;
    }
    const n = (this.running.get(orgId) ?? 1) - 1;
    if (n <= 0) this.running.delete(orgId);
    else this.running.set(orgId, n);
  }
}

function tooMany(what: string, limit: number): AppError {
  const err = new AppError("rate_limited", `Too many ${what} running at once for this organization (at most ${limit}); retry shortly`);
  err.retryAfterSeconds = 1;
  return err;
}
