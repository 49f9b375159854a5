import { createHash, hkdfSync } from "node:crypto";
import { errors } from "../core/errors.ts";

/** The rules of Idempotency-Key (docs/guards.md), free of HTTP types. */

/** Only these methods take part; GET (and HEAD, OPTIONS) ignore the header. */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "DELETE", "PATCH"]);

/** A stored response is replayed for 24 hours, then the key is forgotten. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * How long a request may hold its key before another request with the same key may take it
 * over. Protects against an instance that died mid-request holding the key forever; every
 * mutating route here finishes in well under a second.
 */
export const IDEMPOTENCY_LEASE_MS = 60 * 1000;

/** Stripe's limit; the key is hashed, so this bounds only what a client may send. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** What makes two requests "the same": key, method, full URL, caller, organization. */
export interface ReplayScope {
  key: string;
  method: string;
  /** Path and query string exactly as sent: instances behind different host names share keys. */
  pathAndQuery: string;
  /** Caller.principal: "key:<id>" or "user:<id>". */
  principal: string;
  orgId: string;
}

/** The header value, checked: absent means "not taking part"; empty or oversized is the client's mistake. */
export function parseIdempotencyKey(header: string | null): string | null {
  if (header === null) return null;
  if (header.trim() === "") throw errors.badRequest("Idempotency-Key must not be empty");
  if (header.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw errors.badRequest(`Idempotency-Key must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  }
  return header;
}

function canonical(scope: ReplayScope): string {
  // JSON of an array: no two different scopes serialize alike (no separator ambiguity).
  return JSON.stringify([scope.principal, scope.orgId, scope.method.toUpperCase(), scope.pathAndQuery, scope.key]);
}

/** The store key: a digest, so neither the client's key nor the URL is readable in the store. */
export function replayId(scope: ReplayScope): string {
  return createHash("sha256").update(canonical(scope)).digest("base64url");
}

/**
 * The key that seals a stored response. Derived from the client's Idempotency-Key, which the
 * store never sees, so a stored body (an API key's secret, say) is unreadable to anyone who
 * can read the store but did not send the request.
 */
export function sealingKey(scope: ReplayScope): Buffer {
  return Buffer.from(hkdfSync("sha256", canonical(scope), "media-storage idempotency", "response", 32));
}
