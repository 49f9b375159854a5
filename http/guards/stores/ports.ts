import type { GcraParams, RateDecision } from "../../../domain/guards/rate-limit.ts";
import type { ReplayStore } from "../../../domain/ports/replay.ts";

export type { ReplayStore };

/**
 * The stores behind the guards. Each has an in-process adapter (memory.ts) and a Redis
 * adapter (redis.ts) shared by every instance; `now` always comes from the injected clock, so
 * tests can move time in both. Every method may reject when the store is unreachable: the
 * guards then fail open.
 */

export interface RateLimitStore {
  /** Takes one unit from the bucket `key` if it holds one; one atomic step (one round trip). */
  take(key: string, nowUs: number, params: GcraParams): Promise<RateDecision>;
}

/** A bucket a request is counted against: its key and its policy. */
export interface RateBucket {
  key: string;
  params: GcraParams;
}

/** A response as kept for replay, sealed by the guard: the store holds opaque text. */
export type Sealed = string;

export type BeginResult =
  | { state: "acquired" }
  | { state: "in_flight" }
  | { state: "done"; response: Sealed };

/** What a request with an Idempotency-Key asks of the store before it runs. */
export interface Claim {
  id: string;
  owner: string;
  nowMs: number;
  leaseMs: number;
}

export interface IdempotencyStore {
  /**
   * Atomically: if `id` holds a live record (stored response, or a request still running
   * whose lease has not run out), report it; otherwise claim `id` for `owner` until
   * `now + leaseMs`.
   */
  begin(claim: Claim): Promise<BeginResult>;
  /** Stores the response for `retentionMs`, unless another request has since taken the key over. */
  complete(id: string, owner: string, response: Sealed, nowMs: number, retentionMs: number): Promise<void>;
  /** Gives the key up (the request failed), if `owner` still holds it. */
  release(id: string, owner: string): Promise<void>;
}

export interface GuardStores {
  kind: "memory" | "redis";
  rateLimit: RateLimitStore;
  idempotency: IdempotencyStore;
  replay: ReplayStore;
  /**
   * Counts one request against each bucket in order, stopping at the first that refuses it
   * (the buckets after it are not spent); then, only if every bucket allowed it and `claim` is
   * given, `idempotency.begin`. One atomic step and one round trip: a request counted per
   * credential and per organization, with an Idempotency-Key, costs one Redis round trip, as
   * any other store call does. `decisions` holds one decision per bucket counted.
   */
  takeAll(buckets: readonly RateBucket[], nowUs: number, claim: Claim | null): Promise<{ decisions: RateDecision[]; begun: BeginResult | null }>;
  close(): Promise<void>;
}
