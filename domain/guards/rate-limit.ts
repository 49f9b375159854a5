/**
 * Request rate limiting as a GCRA (generic cell rate algorithm): a bucket of `limit` units per
 * credential that refills continuously at `limit` per `windowMs` (by default 300 per minute,
 * RATE_LIMIT_PER_MINUTE).
 *
 * Chosen over a sliding-window log because the state per credential is one number (the
 * "theoretical arrival time") whatever the limit, so the Redis script is O(1) in time and
 * memory, and remaining/reset/retry-after fall out exactly. The trade-off, documented in
 * docs/guards.md: a credential idle for a minute may send `limit` requests at once and then
 * one every windowMs/limit, so a sliding 60 s window can see up to 2*limit-1; sustained
 * throughput is `limit` per window. The draft RateLimit fields allow any distribution of the
 * quota within the window.
 *
 * All arithmetic is in integer microseconds so this function and the Lua script in
 * rest/guards/stores/redis.ts produce the same numbers (both run on IEEE doubles).
 */

export interface RatePolicy {
  /** Units (requests) per window; also the burst size. */
  limit: number;
  windowMs: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Units left after this request. */
  remaining: number;
  /** Microseconds until the bucket is full again (the quota "resets"). */
  resetUs: number;
  /** When refused: microseconds until one unit is available. 0 when allowed. */
  retryAfterUs: number;
}

export interface GcraParams {
  intervalUs: number;
  windowUs: number;
}

export function gcraParams(policy: RatePolicy): GcraParams {
  const windowUs = policy.windowMs * 1000;
  // Rounded down so `limit` units always fit in the window; the rate is higher by < 1 µs per unit.
  return { intervalUs: Math.max(1, Math.floor(windowUs / policy.limit)), windowUs };
}

/**
 * One request against a bucket whose stored theoretical arrival time is `tatUs` (null: never
 * seen). Returns the decision and the value to store (unchanged when refused).
 */
export function gcra(tatUs: number | null, nowUs: number, p: GcraParams): RateDecision & { tatUs: number } {
  let tat = tatUs ?? nowUs;
  // Past arrival times mean a full bucket. One further in the future than a window cannot come
  // from this algorithm: the clock went backwards (NTP step, or a test clock), so start afresh
  // rather than refuse a credential for the length of the jump.
  if (tat < nowUs || tat > nowUs + p.windowUs) tat = nowUs;
  const next = tat + p.intervalUs;
  const allowAt = next - p.windowUs;
  if (nowUs < allowAt) {
    return { allowed: false, remaining: 0, resetUs: tat - nowUs, retryAfterUs: allowAt - nowUs, tatUs: tat };
  }
  return { allowed: true, ...remainingAfter(next - nowUs, p), retryAfterUs: 0, tatUs: next };
}

/** Units left and time to full, from how far the arrival time runs ahead of now. */
export function remainingAfter(aheadUs: number, p: GcraParams): { remaining: number; resetUs: number } {
  return { remaining: Math.max(0, Math.floor((p.windowUs - aheadUs) / p.intervalUs)), resetUs: aheadUs };
}
