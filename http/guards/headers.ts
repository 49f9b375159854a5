/**
 * The rate limit fields of the IETF draft (draft-ietf-httpapi-ratelimit-headers, structured
 * field form), as docs/guards.md describes them: the credential's policy "default", and the
organization's "organization" when that is the one that refuses.
 */

/** The credential's policy; the organization's cap is "organization", named only when it refuses. */
export const DEFAULT_POLICY = "default";

/** `RateLimit-Policy: "default";q=300;w=60`: quota units per window of seconds. */
export function rateLimitPolicy(limit: number, windowMs: number, name = DEFAULT_POLICY): string {
  return `"${name}";q=${limit};w=${Math.ceil(windowMs / 1000)}`;
}

/** `RateLimit: "default";r=<remaining>;t=<seconds until the quota is whole again>`. */
export function rateLimit(remaining: number, resetUs: number, name = DEFAULT_POLICY): string {
  return `"${name}";r=${Math.max(0, remaining)};t=${seconds(resetUs)}`;
}

/** `Retry-After` in whole seconds, at least 1 so a client never retries at once. */
export function retryAfter(retryAfterUs: number): string {
  return String(Math.max(1, seconds(retryAfterUs)));
}

function seconds(us: number): number {
  return Math.max(0, Math.ceil(us / 1_000_000));
}
