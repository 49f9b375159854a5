import { SCOPES, type Scope } from "../../contract/common.ts";
import { errors } from "../core/errors.ts";

export { SCOPES, type Scope };

/**
 * Who is calling, as established by authentication. Built by the server, never from
 * tool input: the organization in particular can only come from the credential.
 */
export interface Caller {
  orgId: string;
  userId: string;
  /** Set when the credential is an API key; null for a dashboard JWT. */
  apiKeyId: string | null;
  scopes: ReadonlySet<Scope>;
  /** A key restricted to one bucket sees and acts only on that bucket. */
  bucketId: string | null;
  /** Set when the request was signed with a service credential (docs/signed-requests.md). */
  serviceCredentialId?: string | null;
  /** Set when the bearer was an OAuth access token: the grant a person made to a client. */
  oauthGrantId?: string | null;
  /** Stable identity for rate limits and idempotency: "key:<id>", "user:<id>", "svc:<id>" or "oauth:<grant id>". */
  principal: string;
}

/** `admin` implies every scope. */
export function hasScope(caller: Pick<Caller, "scopes">, scope: Scope): boolean {
  return caller.scopes.has("admin") || caller.scopes.has(scope);
}

export function requireScope(caller: Caller, scope: Scope): void {
  if (!hasScope(caller, scope)) throw errors.forbidden(`This operation needs the '${scope}' scope`);
}

/** Expand a stored scope list to what it grants, for display and comparison. */
export function effectiveScopes(scopes: Iterable<Scope>): Set<Scope> {
  const set = new Set(scopes);
  return set.has("admin") ? new Set(SCOPES) : set;
}
