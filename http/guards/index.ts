import type { Deps } from "../../domain/core/deps.ts";
import type { Middleware } from "../pipeline.ts";
import { FailOpen } from "./fail-open.ts";
import { IdempotencyGuard } from "./idempotency.ts";
import { limitByAddress, limitCallers, limitRefused, RateLimiter } from "./rate-limit.ts";
import type { GuardStores } from "./stores/ports.ts";

/** The guard lists createApp takes, in the order they run. */
export interface Guards {
  preAuthGuards: Middleware[];
  guards: Middleware[];
  mcpGuards: Middleware[];
  publicGuards: Middleware[];
  /** Signed thumbnail paths: an allowance of their own, per address. */
  thumbnailGuards: Middleware[];
}

/**
 * A page of tiles loads up to a hundred thumbnails at once, and scrolling through a bucket
 * many hundreds a minute: their own per-address allowance, this many times the per-credential
 * limit, so the pictures neither spend nor are refused by the budget of the calls beside them.
 */
export const THUMBNAIL_ALLOWANCE_FACTOR = 20;

/**
 * Rate limit and idempotency over the chosen stores (app/services.ts picks Redis or memory).
 * Tool routes: [limitRefused] -> authentication -> limit per credential, then per organization
 * -> idempotency -> tool.
 * /mcp: the same without idempotency (a JSON-RPC body is not a resource); each POST counts one.
 */
export function createGuards(deps: Pick<Deps, "clock" | "log" | "config">, stores: GuardStores): Guards {
  // One store, one outage: both limiters report through one FailOpen (their counts share a round trip).
  const rateLimitStore = new FailOpen(deps.log, "rate limit");
  const limiter = new RateLimiter(stores, { limit: deps.config.rateLimitPerMinute, windowMs: 60_000 }, deps.clock, rateLimitStore);
  // The organization's cap: above the credential's, so it binds only on many keys at once.
  const orgLimiter = new RateLimiter(
    stores,
    { limit: deps.config.orgRateLimitPerMinute, windowMs: 60_000 },
    deps.clock,
    rateLimitStore,
    "organization",
  );
  const thumbnails = new RateLimiter(
    stores,
    { limit: deps.config.rateLimitPerMinute * THUMBNAIL_ALLOWANCE_FACTOR, windowMs: 60_000 },
    deps.clock,
    rateLimitStore,
    "thumbnails",
  );
  const idempotency = new IdempotencyGuard(stores.idempotency, deps.clock, deps.log, new FailOpen(deps.log, "idempotency"));
  return {
    preAuthGuards: [limitRefused(limiter)],
    // One Redis round trip before the tool: both counts and the idempotency claim.
    guards: [limitCallers(limiter, idempotency, orgLimiter), idempotency.middleware],
    mcpGuards: [limitCallers(limiter, undefined, orgLimiter)],
    publicGuards: [limitByAddress(limiter)],
    thumbnailGuards: [limitByAddress(thumbnails, "t")],
  };
}
