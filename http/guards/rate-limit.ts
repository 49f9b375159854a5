import type { Clock } from "../../domain/core/clock.ts";
import { AppError, isAppError } from "../../domain/core/errors.ts";
import { gcraParams, type GcraParams, type RateDecision, type RatePolicy } from "../../domain/guards/rate-limit.ts";
import { callerOf, type HttpContext, type Middleware } from "../pipeline.ts";
import type { FailOpen } from "./fail-open.ts";
import { DEFAULT_POLICY, rateLimit, rateLimitPolicy, retryAfter } from "./headers.ts";
import type { IdempotencyGuard } from "./idempotency.ts";
import type { GuardStores } from "./stores/ports.ts";

/**
 * Counts one request against a bucket, sets the RateLimit fields on whatever response the
 * request ends with, and refuses with 429 when the bucket is empty. With the store
 * unreachable the request is let through and only RateLimit-Policy is sent (a remaining
 * count would be a guess).
 */
export class RateLimiter {
  private readonly params: GcraParams;
  private readonly policyHeader: string;

  /**
   * `name`: the policy's name in the fields. A limiter that is not the default one (the
   * organization's cap) sets the fields only when it refuses: the credential's remaining count
   * is what a client paces itself by, and the organization's would leak its siblings' traffic.
   */
  constructor(
    private readonly stores: Pick<GuardStores, "rateLimit" | "takeAndBegin">,
    policy: RatePolicy,
    private readonly clock: Clock,
    private readonly failOpen: FailOpen,
    private readonly name = DEFAULT_POLICY,
  ) {
    this.params = gcraParams(policy);
    this.policyHeader = rateLimitPolicy(policy.limit, policy.windowMs, name);
  }

  /**
   * With `idempotency`, a request that will claim an Idempotency-Key claims it in the same
   * round trip, and only if it is allowed: the order (limit, then idempotency) is kept inside
   * one atomic step.
   */
  /** Resolves true when the store answered, false when it failed (the request goes on unlimited). */
  async count(ctx: HttpContext, bucket: string, idempotency?: IdempotencyGuard): Promise<boolean> {
    const quiet = this.name !== DEFAULT_POLICY;
    if (!quiet) ctx.responseHeaders.set("ratelimit-policy", this.policyHeader);
    const nowUs = this.clock.now().getTime() * 1000;
    const claim = idempotency?.claimFor(ctx) ?? null;
    let decision: RateDecision | undefined;
    if (claim) {
      const both = await this.failOpen.run(() => this.stores.takeAndBegin(bucket, nowUs, this.params, claim), ctx.requestId);
      decision = both?.decision;
      if (!both || both.begun) idempotency!.claimed(ctx, both?.begun ?? undefined);
    } else {
      decision = await this.failOpen.run(() => this.stores.rateLimit.take(bucket, nowUs, this.params), ctx.requestId);
    }
    if (!decision) return false;
    if (quiet && decision.allowed) return true;
    if (quiet) ctx.responseHeaders.append("ratelimit-policy", this.policyHeader);
    ctx.responseHeaders.set("ratelimit", rateLimit(decision.remaining, decision.resetUs, this.name));
    if (!decision.allowed) {
      ctx.responseHeaders.set("retry-after", retryAfter(decision.retryAfterUs));
      throw new AppError("rate_limited", "Too many requests; retry after the number of seconds in Retry-After");
    }
    return true;
  }
}

/**
 * After authentication: one bucket per credential (API key or JWT user), REST and MCP alike,
 * then one per organization (`orgLimiter`), so minting more keys does not multiply what one
 * organization may send (2026 attack run). Given the idempotency guard that follows, the credential's
 * count makes its claim in the same round trip.
 *
 * The credential counts first: a request its own limit refuses never spends the organization's
 * units, so one key hammering past its limit cannot starve its sibling keys. A request the
 * organization refuses has spent a unit of its credential (harmless: the organization is over
 * its cap anyway) and gives back the Idempotency-Key it claimed, so a retry runs.
 */
export function limitCallers(limiter: RateLimiter, idempotency?: IdempotencyGuard, orgLimiter?: RateLimiter): Middleware {
  return async (ctx, next) => {
    const caller = callerOf(ctx);
    const answered = await limiter.count(ctx, `p:${caller.principal}`, idempotency);
    // Both counts live in the same store: when it just failed (a hung Redis costs its command
    // timeout), asking again would only double the wait.
    if (orgLimiter && answered) {
      try {
        await orgLimiter.count(ctx, `o:${caller.orgId}`);
      } catch (err) {
        idempotency?.abandon(ctx);
        throw err;
      }
    }
    return next();
  };
}

/**
 * Wraps authentication: a request it refuses counts against its client address, so a client
 * sending bad credentials is slowed down like any other. Requests that authenticate are
 * counted per credential by limitCallers instead, never here.
 */
export function limitRefused(limiter: RateLimiter): Middleware {
  return async (ctx, next) => {
    try {
      return await next();
    } catch (err) {
      if (ctx.caller === null && isAppError(err) && err.code === "unauthorized") await limiter.count(ctx, addressBucket(ctx));
      throw err;
    }
  };
}

/** Routes without credentials (OpenAPI document, docs, unknown /api paths): per client address. */
export function limitByAddress(limiter: RateLimiter): Middleware {
  return async (ctx, next) => {
    await limiter.count(ctx, addressBucket(ctx));
    return next();
  };
}

function addressBucket(ctx: HttpContext): string {
  return `a:${ctx.clientAddress ?? "unknown"}`;
}
