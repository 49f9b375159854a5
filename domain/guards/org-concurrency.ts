import type { TimeBudget } from "../core/config.ts";
import { AppError } from "../core/errors.ts";

export type { TimeBudget };

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * At most `limit` pieces of one kind of expensive work (a full-text search, a render) running at
 * once for one organization, in this process (2026 attack run: twenty searches of one organization held
 * every connection of the pool, and another organization's list waited 13 s). The pool is per
 * process, so the cap is too: with `limit` below the pool's size, one organization cannot take
 * every connection, whatever its rate limit allows.
 *
 * With a `budget`, the organization's work is also bounded in time: a token bucket whose tokens
 * are milliseconds, refilled at `msPerSecond`, holding at most `burstMs`. Work is charged what it
 * took once it ends, so one long search can overdraw the bucket; the organization's next one then
 * waits (or is refused) until the refill has covered the debt. The cap bounds how many searches
 * run at once, not how much of the machine they take back to back: three at a time, one after
 * another, kept both of a 2-core host's cores busy in PostgreSQL (bench/notes/2026-11-27-neighbours-sittings.md).
 * The same idea as GitHub's secondary rate limit on CPU time per minute.
 *
 * Work over the cap or the budget waits up to `waitMs` for a slot, in arrival order (a short
 * burst is smoothed, not refused); past that it is refused with 429 `rate_limited` and
 * `Retry-After`. A waiting request holds no connection.
 */
export class OrgConcurrency {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();
  private readonly buckets = new Map<string, Bucket>();
  /** Each organization's recent cost of one piece of work, in ms (a moving average). */
  private readonly typical = new Map<string, number>();

  constructor(
    /** What the work is called in the refusal ("searches", "renders"). */
    private readonly what: string,
    private readonly limit: number,
    private readonly waitMs: number,
    private readonly budget: TimeBudget | null = null,
    /** Monotonic milliseconds (tests pass their own). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Runs `work` in one of `orgId`'s slots, once one is free and its time budget allows. */
  async run<T>(orgId: string, work: () => Promise<T>): Promise<T> {
    const deadline = this.now() + this.waitMs;
    // Synchronous when nothing has to wait, so the slot is taken before this call returns.
    const expected = this.take(orgId) ?? (await this.withinBudget(orgId, deadline));
    try {
      await this.acquire(orgId, deadline - this.now());
    } catch (err) {
      if (expected) this.refill(orgId).tokens += expected;
      throw err;
    }
    const started = this.now();
    try {
      return await work();
    } finally {
      this.charge(orgId, expected, this.now() - started);
      this.release(orgId);
    }
  }

  /** Work of `orgId` running now (tests, metrics). */
  inFlight(orgId: string): number {
    return this.running.get(orgId) ?? 0;
  }

  /** Milliseconds of budget `orgId` has left now (negative: in debt); null without a budget. */
  budgetLeft(orgId: string): number | null {
    return this.budget ? this.refill(orgId).tokens : null;
  }

  private refill(orgId: string): Bucket {
    const b = this.budget!;
    const now = this.now();
    const bucket = this.buckets.get(orgId);
    if (!bucket) return { tokens: b.burstMs, at: now };
    bucket.tokens = Math.min(b.burstMs, bucket.tokens + ((now - bucket.at) * b.msPerSecond) / 1000);
    bucket.at = now;
    return bucket;
  }

  /**
   * Takes what the work is expected to cost (the organization's recent average) from the bucket
   * at once, so work that arrives together is spread out rather than let in together; null when
   * the organization is in debt. What was taken is settled against the real cost when the work ends.
   */
  private take(orgId: string): number | null {
    if (!this.budget) return 0;
    const bucket = this.refill(orgId);
    if (bucket.tokens <= 0) return null;
    const expected = this.typical.get(orgId) ?? 0;
    bucket.tokens -= expected;
    this.buckets.set(orgId, bucket);
    return expected;
  }

  /** Waits until the organization is out of debt, if that comes before `deadline`; else refuses. */
  private async withinBudget(orgId: string, deadline: number): Promise<number> {
    for (;;) {
      const taken = this.take(orgId);
      if (taken !== null) return taken;
      const waitMs = (-this.refill(orgId).tokens * 1000) / this.budget!.msPerSecond;
      if (this.now() + waitMs > deadline) {
        throw tooMuch(`This organization's ${this.what} have used their time (at most ${this.budget!.msPerSecond} ms per second); retry shortly`, waitMs);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(waitMs)));
    }
  }

  /** Settles the work's cost: what it took, less what was taken when it was let in. */
  private charge(orgId: string, expected: number, tookMs: number): void {
    if (!this.budget) return;
    const bucket = this.refill(orgId);
    bucket.tokens -= tookMs - expected;
    this.buckets.set(orgId, bucket);
    const typical = this.typical.get(orgId);
    this.typical.set(orgId, typical === undefined ? tookMs : 0.8 * typical + 0.2 * tookMs);
    // Full buckets carry no information: forget them so the maps hold only recent spenders.
    if (this.buckets.size > 10_000) {
      for (const id of [...this.buckets.keys()]) {
        if (this.refill(id).tokens >= this.budget.burstMs) {
          this.buckets.delete(id);
          this.typical.delete(id);
        }
      }
    }
  }

  private async acquire(orgId: string, waitMs: number): Promise<void> {
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
      const timer = setTimeout(
        () => {
          const i = queue.indexOf(wake);
          if (i >= 0) queue.splice(i, 1);
          if (queue.length === 0 && this.waiting.get(orgId) === queue) this.waiting.delete(orgId);
          resolve(false);
        },
        Math.max(0, waitMs),
      );
      queue.push(wake);
    });
    // A woken waiter inherits the slot its waker released: the count did not change.
    if (!admitted) throw tooMuch(`Too many ${this.what} running at once for this organization (at most ${this.limit}); retry shortly`, 1000);
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

function tooMuch(message: string, retryAfterMs: number): AppError {
  const err = new AppError("rate_limited", message);
  err.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return err;
}
