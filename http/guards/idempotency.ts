import type { Clock } from "../../domain/core/clock.ts";
import { AppError } from "../../domain/core/errors.ts";
import {
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_RETENTION_MS,
  IDEMPOTENT_METHODS,
  parseIdempotencyKey,
  type ReplayScope,
  replayId,
  sealingKey,
} from "../../domain/guards/idempotency.ts";
import type { Logger } from "../../domain/ports/log.ts";
import { callerOf, type HttpContext, type Middleware } from "../pipeline.ts";
import type { FailOpen } from "./fail-open.ts";
import { capture, replay, seal, unseal } from "./stored-response.ts";
import type { BeginResult, Claim, IdempotencyStore } from "./stores/ports.ts";

/** Responses of mutating routes are small JSON; anything larger is sent but not kept. */
export const MAX_STORED_RESPONSE_BYTES = 1024 * 1024;

interface Prepared {
  claim: Claim;
  sealer: Buffer;
}

/** The store was unreachable when the claim was made on this guard's behalf. */
const UNAVAILABLE = Symbol("unavailable");

/**
 * Idempotency-Key (docs/guards.md). Runs after authentication and the rate limit, before the tool.
 * It wraps tool routes only: routes added through createApp's extraRoutes (the payment
 * webhook) never pass through it.
 *
 * The first request with a key claims it; a concurrent one gets 409 idempotency_in_flight
 * rather than running twice; a 2xx outcome is stored for 24 hours and replayed; any other
 * outcome (an error status or an exception) gives the key up so a retry runs afresh. If the
 * store fails, the request runs as if it carried no key.
 *
 * The claim is normally made by the rate limiter, in the same round trip as its count
 * (`claimFor`, then `claimed`); on its own the guard makes it itself.
 */
export class IdempotencyGuard {
  private readonly prepared = new WeakMap<HttpContext, Prepared | null>();
  private readonly outcomes = new WeakMap<HttpContext, BeginResult | typeof UNAVAILABLE>();

  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly failOpen: FailOpen,
  ) {}

  /** The claim this request will make, or null: no key, a method that ignores it, or a key the guard will refuse with 400. */
  claimFor(ctx: HttpContext): Claim | null {
    try {
      return this.prepare(ctx)?.claim ?? null;
    } catch {
      return null;
    }
  }

  /** The outcome of a claim made on this guard's behalf; undefined when the store failed. */
  claimed(ctx: HttpContext, outcome: BeginResult | undefined): void {
    this.outcomes.set(ctx, outcome ?? UNAVAILABLE);
  }

  readonly middleware: Middleware = async (ctx, next) => {
    const prepared = this.prepare(ctx);
    if (!prepared) return next();
    const { claim, sealer } = prepared;
    const begun = await this.begin(ctx, claim);
    if (!begun) return next();
    if (begun.state === "in_flight") {
      ctx.responseHeaders.set("retry-after", "1");
      throw new AppError("idempotency_in_flight", "A request with this Idempotency-Key is still running; retry shortly to get its response");
    }
    if (begun.state === "done") {
      const stored = unseal(begun.response, sealer);
      if (stored) return replay(stored);
      // Unreadable record: answer as if the store were down rather than fail the request.
      this.log.error("stored idempotent response does not open; running the request again", { requestId: ctx.requestId });
      return next();
    }

    // Neither the release nor the store below is awaited: the command is written to the store
    // before the answer is, and a retry can only follow the answer. On one instance (one
    // connection, or the memory store) the store sees them in that order; across instances a
    // retry racing the write sees the claim and gets 409, never a second run. That saves a
    // round trip on every keyed request (bench/guards.ts).
    const release = () => void this.failOpen.run(() => this.store.release(claim.id, claim.owner), ctx.requestId);
    let response: Response;
    try {
      response = await next();
    } catch (err) {
      release();
      throw err;
    }
    if (response.status < 200 || response.status > 299) {
      release();
      return response;
    }
    const captured = await capture(response, MAX_STORED_RESPONSE_BYTES);
    if (!captured.stored) {
      this.log.warn("response too large to keep for Idempotency-Key replay; a retry will run again", { requestId: ctx.requestId });
      release();
      return captured.response;
    }
    const sealed = seal(captured.stored, sealer);
    void this.failOpen.run(() => this.store.complete(claim.id, claim.owner, sealed, this.clock.now().getTime(), IDEMPOTENCY_RETENTION_MS), ctx.requestId);
    return captured.response;
  };

  private async begin(ctx: HttpContext, claim: Claim): Promise<BeginResult | undefined> {
    const outcome = this.outcomes.get(ctx);
    if (outcome === undefined) return this.failOpen.run(() => this.store.begin(claim), ctx.requestId);
    if (outcome === UNAVAILABLE) {
      this.failOpen.failed(new Error("store unreachable during the rate limit's round trip"), ctx.requestId);
      return undefined;
    }
    this.failOpen.up();
    return outcome;
  }

  /** Parses and derives once per request; throws 400 for a key the client got wrong. */
  private prepare(ctx: HttpContext): Prepared | null {
    const known = this.prepared.get(ctx);
    if (known !== undefined) return known;
    let prepared: Prepared | null = null;
    if (IDEMPOTENT_METHODS.has(ctx.request.method)) {
      const key = parseIdempotencyKey(ctx.request.headers.get("idempotency-key"));
      if (key !== null) {
        const caller = callerOf(ctx);
        const scope: ReplayScope = { key, method: ctx.request.method, pathAndQuery: ctx.url.pathname + ctx.url.search, principal: caller.principal, orgId: caller.orgId };
        prepared = {
          claim: { id: replayId(scope), owner: ctx.requestId, nowMs: this.clock.now().getTime(), leaseMs: IDEMPOTENCY_LEASE_MS },
          sealer: sealingKey(scope),
        };
      }
    }
    this.prepared.set(ctx, prepared);
    return prepared;
  }
}

/** The guard on its own, making its claim itself (one extra round trip). */
export function idempotency(store: IdempotencyStore, clock: Clock, log: Logger, failOpen: FailOpen): Middleware {
  return new IdempotencyGuard(store, clock, log, failOpen).middleware;
}
