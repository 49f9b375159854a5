import type { Clock } from "../../domain/core/clock.ts";
import { AppError, isAppError } from "../../domain/core/errors.ts";
import { gcraParams, type GcraParams, type RateDecision, type RatePolicy } from "../../domain/guards/rate-limit.ts";
import { callerOf, type HttpContext, type Middleware } from "../pipeline.ts";
import type { FailOpen } from "./fail-open.ts";
import { DEFAULT_POLICY, rateLimit, rateLimitPolicy, retryAfter } from "./headers.ts";
import type { IdempotencyGuard } from "./idempotency.ts";
import type { GuardStores } from "./stores/ports.ts";

/**
 * One rate-limit policy: counts requests against its buckets, sets the RateLimit fields on
 * whatever response the request ends with, and refuses with 429 when the bucket is empty.
 * With the store unreachable the request is let through and only RateLimit-Policy is sent (a
 * remaining count would be a guess).
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
    private readonly stores: Pick<GuardStores, "rateLimit" | "takeAll">,
    policy: RatePolicy,
    private readonly clock: Clock,
    private readonly failOpen: FailOpen,
    private readonly name = DEFAULT_POLICY,
  ) {
    this.params = gcraParams(policy);
    this.policyHeader = rateLimitPolicy(policy.limit, policy.windowMs, name);
  }

  /** Counts the request against `bucket`; resolves true when the store answered, false when it failed. */
  async count(ctx: HttpContext, bucket: string): Promise<boolean> {
    this.announce(ctx);
    const decision = await this.failOpen.run(() => this.stores.rateLimit.take(bucket, this.nowUs(), this.params), ctx.requestId);
    if (!decision) return false;
    this.decide(ctx, decision);
    return true;
  }

  /**
   * Counts the request against `bucket` of this policy and then of each of `also` (the
   * organization's cap), in one store round trip that carries the Idempotency-Key claim too:
   * the order (credential, organization, idempotency) is kept inside one atomic step, and a
   * request one bucket refuses neither spends the later buckets nor claims its key.
   */
  async countAll(ctx: HttpContext, bucket: string, also: { limiter: RateLimiter; bucket: string }[], idempotency?: IdempotencyGuard): Promise<void> {
    const checks = [{ limiter: this as RateLimiter, bucket }, ...also];
    for (const c of checks) c.limiter.announce(ctx);
    const claim = idempotency?.claimFor(ctx) ?? null;
    const buckets = checks.map((c) => ({ key: c.bucket, params: c.limiter.params }));
    const outcome = await this.failOpen.run(() => this.stores.takeAll(buckets, this.nowUs(), claim), ctx.requestId);
    if (!outcome) {
      if (claim) idempotency!.claimed(ctx, undefined);
      return;
    }
    outcome.decisions.forEach((decision, i) => checks[i]!.limiter.decide(ctx, decision));
    if (claim) idempotency!.claimed(ctx, outcome.begun ?? undefined);
  }

  private nowUs(): number {
    return this.clock.now().getTime() * 1000;
  }

  private announce(ctx: HttpContext): void {
    if (this.name === DEFAULT_POLICY) ctx.responseHeaders.set("ratelimit-policy", this.policyHeader);
  }

  /** Sets the fields for `decision` (a quiet policy only when it refuses) and throws 429 when it refuses. */
  private decide(ctx: HttpContext, decision: RateDecision): void {
    const quiet = this.name !== DEFAULT_POLICY;
    if (quiet && decision.allowed) return;
    if (quiet) ctx.responseHeaders.append("ratelimit-policy", this.policyHeader);
    ctx.responseHeaders.set("ratelimit", rateLimit(decision.remaining, decision.resetUs, this.name));
    if (!decision.allowed) {
      const seconds = retryAfter(decision.retryAfterUs);
      ctx.responseHeaders.set("retry-after", seconds);
      // The number in the text too: an agent behind an MCP client never sees the header.
      throw new AppError("rate_limited", `Too many requests; retry in ${seconds} s (Retry-After)`);
    }
  }
}

/**
 * After authentication: one bucket per credential (API key or JWT user), REST and MCP alike,
 * then one per organization (`orgLimiter`), so minting more keys does not multiply what one
 * organization may send (2026 attack run). Both counts and the Idempotency-Key claim of the
 * guard that follows are one store round trip.
 *
 * The credential counts first: a request its own limit refuses never spends the organization's
 * units, so one key hammering past its limit cannot starve its sibling keys. A request the
 * organization refuses has spent a unit of its credential (harmless: the organization is over
 * its cap anyway) and has claimed no Idempotency-Key, so a retry runs.
 */
export function limitCallers(limiter: RateLimiter, idempotency?: IdempotencyGuard, orgLimiter?: RateLimiter): Middleware {
  return async (ctx, next) => {
    const caller = callerOf(ctx);
    await limiter.countAll(ctx, `p:${caller.principal}`, orgLimiter ? [{ limiter: orgLimiter, bucket: `o:${caller.orgId}` }] : [], idempotency);
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
export function limitByAddress(limiter: RateLimiter, space = ""): Middleware {
  return async (ctx, next) => {
    await limiter.count(ctx, `${space}${addressBucket(ctx)}`);
    return next();
  };
}

function addressBucket(ctx: HttpContext): string {
  return `a:${ctx.clientAddress ?? "unknown"}`;
}
