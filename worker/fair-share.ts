/**
 * Fairness between organizations inside one job class (docs/worker.md, "Fairness"). Both queues
 * follow one rule: when a slot frees, the next job is taken from the organization with the
 * fewest of its jobs in hand, so one organization's backlog delays another's next job by about
 * one job's length at most, however long that backlog is.
 *
 * In-process: `FairLane` below keeps a queue per organization and picks by that rule. BullMQ:
 * a job's priority is 1 + its organization's outstanding jobs in the class when it is queued
 * (`fairPriority`), counted in Redis (`FairnessCounters`): the n-th outstanding job of every
 * organization gets priority n, and BullMQ runs lower numbers first (in order of arrival within
 * one), which takes the organizations' jobs in turns.
 */

/** A first-in first-out queue whose take is O(1) (an array's shift is O(n) on a long backlog). */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  push(item: T): void {
    this.items.push(item);
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head]!;
    this.items[this.head++] = undefined as T;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

/**
 * The waiting jobs of one class, by organization. `take` picks the organization with the fewest
 * jobs running, and among those the one served least recently (a newcomer first), then takes
 * its oldest job. A plain rotation would let an organization that had just started a job go
 * again before one that arrived meanwhile; counting what runs also keeps an organization that
 * holds many slots from being given more while another waits.
 */
export class FairLane<T> {
  private readonly waiting = new Map<string, Fifo<T>>();
  private readonly running = new Map<string, number>();
  private readonly served = new Map<string, number>();
  private turn = 0;
  private count = 0;

  /** Jobs waiting. */
  get size(): number {
    return this.count;
  }

  push(org: string, item: T): void {
    let queue = this.waiting.get(org);
    if (!queue) this.waiting.set(org, (queue = new Fifo<T>()));
    queue.push(item);
    this.count++;
  }

  /** The next job to run and its organization, counted as running until `done(org)`. */
  take(): { org: string; item: T } | undefined {
    let best: string | undefined;
    let bestRunning = Infinity;
    let bestServed = Infinity;
    for (const org of this.waiting.keys()) {
      const running = this.running.get(org) ?? 0;
      const served = this.served.get(org) ?? -1;
      if (running < bestRunning || (running === bestRunning && served < bestServed)) {
        best = org;
        bestRunning = running;
        bestServed = served;
      }
    }
    if (best === undefined) return undefined;
    const queue = this.waiting.get(best)!;
    const item = queue.shift()!;
    if (queue.length === 0) this.waiting.delete(best);
    this.count--;
    this.running.set(best, bestRunning + 1);
    this.served.set(best, this.turn++);
    return { org: best, item };
  }

  /** A job `take` gave ended (or went to wait for a retry). */
  done(org: string): void {
    const running = (this.running.get(org) ?? 1) - 1;
    if (running > 0) return void this.running.set(org, running);
    this.running.delete(org);
    // An organization with nothing waiting or running is forgotten: it comes back as a newcomer.
    if (!this.waiting.has(org)) this.served.delete(org);
  }

  /** Forgets every waiting job (shutdown: they are handed back). */
  clear(): void {
    this.waiting.clear();
    this.count = 0;
  }
}

/** BullMQ's largest priority (2^21); larger numbers are refused. */
export const MAX_PRIORITY = 2_097_152;

/** A job's priority from its organization's outstanding jobs in the class, itself included. */
export const fairPriority = (outstanding: number): number => Math.min(MAX_PRIORITY, Math.max(1, Math.floor(outstanding)));

/**
 * How long an organization's counter outlives its last use. A counter can drift (a job removed
 * by hand, a process killed between a job's end and its count, an outbox row handed over twice
 * after a crash): too high, its organization's jobs queue behind others' more than they should;
 * too low, ahead. Either costs fairness only, never a job: every job is queued with a valid
 * priority and runs. The drift is forgotten once the organization has queued and finished
 * nothing in the class for this long.
 */
export const FAIRNESS_TTL_MS = 60 * 60 * 1000;

// One round trip each, and atomic: the count and its expiry never part.
const QUEUED = "local n = redis.call('INCR', KEYS[1]) redis.call('PEXPIRE', KEYS[1], ARGV[1]) return n";
const SETTLED = "local n = redis.call('DECR', KEYS[1]) if n <= 0 then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return n";

interface Evaluates {
  eval(script: string, keys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** Outstanding (queued, running or waiting for a retry) jobs per organization and class, in Redis: `<prefix>:fairness:<class>:<org>`. */
export class FairnessCounters {
  constructor(
    private readonly redis: Evaluates,
    private readonly prefix: string,
  ) {}

  key(jobClass: string, org: string): string {
    return `${this.prefix}:fairness:${jobClass}:${org}`;
  }

  /** Counts a job in; resolves with the organization's outstanding jobs, this one included. */
  async queued(jobClass: string, org: string): Promise<number> {
    return Number(await this.redis.eval(QUEUED, 1, this.key(jobClass, org), FAIRNESS_TTL_MS));
  }

  /** Counts a job out (completed, or failed for good); never below zero. */
  async settled(jobClass: string, org: string): Promise<void> {
    await this.redis.eval(SETTLED, 1, this.key(jobClass, org), FAIRNESS_TTL_MS);
  }
}

/** The organization a job is for: every payload names it (domain/core/jobs.ts). */
export const orgOf = (data: unknown): string => {
  const org = (data as { orgId?: unknown } | null)?.orgId;
  return typeof org === "string" ? org : "";
};
