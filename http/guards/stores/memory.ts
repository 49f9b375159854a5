import { gcra, type GcraParams, type RateDecision } from "../../../domain/guards/rate-limit.ts";
import type { BeginResult, Claim, GuardStores, IdempotencyStore, RateLimitStore, ReplayStore, Sealed } from "./ports.ts";

// Expired entries are dropped every this many operations, so memory follows the live set
// without a timer to stop.
const SWEEP_EVERY = 1024;

/** Per-instance buckets, for a single embedded instance (no REDIS_URL). */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly tats = new Map<string, number>();
  private ops = 0;

  async take(key: string, nowUs: number, params: GcraParams): Promise<RateDecision> {
    return this.takeNow(key, nowUs, params);
  }

  takeNow(key: string, nowUs: number, params: GcraParams): RateDecision {
    if (++this.ops % SWEEP_EVERY === 0) {
      // A bucket whose arrival time has passed is full: the same as no entry.
      for (const [k, tat] of this.tats) if (tat <= nowUs) this.tats.delete(k);
    }
    const { tatUs, ...decision } = gcra(this.tats.get(key) ?? null, nowUs, params);
    if (decision.allowed) this.tats.set(key, tatUs);
    return decision;
  }
}

type Entry = { state: "pending"; owner: string; until: number } | { state: "done"; until: number; response: Sealed };

/**
 * Stored responses of one instance. Bounded in bytes: past `maxBytes` the oldest responses
 * are forgotten early (a retry of those then runs again), so a flood of keys cannot exhaust memory.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private ops = 0;

  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  async begin(claim: Claim): Promise<BeginResult> {
    return this.beginNow(claim);
  }

  beginNow({ id, owner, nowMs, leaseMs }: Claim): BeginResult {
    if (++this.ops % SWEEP_EVERY === 0) this.sweep(nowMs);
    const entry = this.entries.get(id);
    if (entry && entry.until > nowMs) return entry.state === "done" ? { state: "done", response: entry.response } : { state: "in_flight" };
    this.put(id, { state: "pending", owner, until: nowMs + leaseMs });
    return { state: "acquired" };
  }

  async complete(id: string, owner: string, response: Sealed, nowMs: number, retentionMs: number): Promise<void> {
    const entry = this.entries.get(id);
    // Taken over after our lease ran out: the other request's outcome stands.
    if (entry && !(entry.state === "pending" && entry.owner === owner)) return;
    this.put(id, { state: "done", until: nowMs + retentionMs, response });
    while (this.bytes > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
    }
  }

  async release(id: string, owner: string): Promise<void> {
    const entry = this.entries.get(id);
    if (entry?.state === "pending" && entry.owner === owner) this.delete(id);
  }

  private put(id: string, entry: Entry): void {
    // Delete first so insertion order stays oldest-first for eviction.
    this.delete(id);
    this.entries.set(id, entry);
    if (entry.state === "done") this.bytes += entry.response.length;
  }

  private delete(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    if (entry.state === "done") this.bytes -= entry.response.length;
    this.entries.delete(id);
  }

  private sweep(nowMs: number): void {
    for (const [id, entry] of this.entries) if (entry.until <= nowMs) this.delete(id);
  }
}

/** Accepted signatures of one instance, each until its window has passed. */
export class MemoryReplayStore implements ReplayStore {
  private readonly seen = new Map<string, number>();
  private ops = 0;

  async firstUse(id: string, nowMs: number, ttlMs: number): Promise<boolean> {
    if (++this.ops % SWEEP_EVERY === 0) for (const [k, until] of this.seen) if (until <= nowMs) this.seen.delete(k);
    const until = this.seen.get(id);
    if (until !== undefined && until > nowMs) return false;
    this.seen.set(id, nowMs + ttlMs);
    return true;
  }
}

export function memoryGuardStores(): GuardStores {
  const rateLimit = new MemoryRateLimitStore();
  const idempotency = new MemoryIdempotencyStore();
  return {
    kind: "memory",
    rateLimit,
    idempotency,
    replay: new MemoryReplayStore(),
    // No await between the steps: nothing else runs in between, as in the Redis script.
    takeAll: async (buckets, nowUs, claim) => {
      const decisions: RateDecision[] = [];
      for (const b of buckets) {
        const decision = rateLimit.takeNow(b.key, nowUs, b.params);
        decisions.push(decision);
        if (!decision.allowed) return { decisions, begun: null };
      }
      return { decisions, begun: claim ? idempotency.beginNow(claim) : null };
    },
    close: async () => {},
  };
}
