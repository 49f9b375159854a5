import { and, eq, inArray, isNull } from "drizzle-orm";
import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../../db/client.ts";
import { oauthGrants, oauthSecrets } from "../../db/schema/index.ts";
import { recordAudit } from "../audit/audit-writer.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import type { Caller, Scope } from "./caller.ts";
import { OAuthError } from "./oauth-errors.ts";
import { endGrant } from "./oauth-grants.ts";
import { hashSecret } from "./secrets.ts";

/** Access tokens live an hour; a client refreshes them (the refresh token rotates each time). */
export const ACCESS_TOKEN_SECONDS = 3600;
/** A refresh token unused this long expires (the grant's own expiry comes first when sooner). */
export const REFRESH_TOKEN_DAYS = 30;

/** Bearer values of this service's OAuth tokens start with these, so authentication knows them from API keys and JWTs. */
export const ACCESS_PREFIX = "mat_";
const REFRESH_PREFIX = "mrt_";

type GrantRow = typeof oauthGrants.$inferSelect;

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const newToken = (prefix: string) => prefix + randomBytes(32).toString("base64url");
const earlier = (a: Date, b: Date) => (a < b ? a : b);

async function issue(tx: Db, grant: GrantRow, now: Date): Promise<TokenResponse> {
  const access = newToken(ACCESS_PREFIX);
  const refresh = newToken(REFRESH_PREFIX);
  const accessExpiry = earlier(new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000), grant.expiresAt);
  await tx.insert(oauthSecrets).values([
    { hash: hashSecret(access), grantId: grant.id, kind: "access", expiresAt: accessExpiry, createdAt: now },
    { hash: hashSecret(refresh), grantId: grant.id, kind: "refresh", expiresAt: earlier(new Date(now.getTime() + REFRESH_TOKEN_DAYS * 86_400_000), grant.expiresAt), createdAt: now },
  ]);
  return {
    access_token: access,
    token_type: "Bearer",
    expires_in: Math.max(0, Math.round((accessExpiry.getTime() - now.getTime()) / 1000)),
    refresh_token: refresh,
    scope: grant.scopes.join(" "),
  };
}

/** PKCE S256 (RFC 7636 section 4.6): the challenge is base64url(SHA-256(verifier)). */
function verifierMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  return createHash("sha256").update(verifier).digest("base64url") === challenge;
}

type Outcome = { tokens: TokenResponse } | { refuse: OAuthError; revoke?: GrantRow };

/** The code or refresh token presented, once: marking it used and reading it are one statement, so two presentations never both succeed. */
async function takeSecret(tx: Db, value: string, kind: "code" | "refresh", now: Date) {
  const hash = hashSecret(value);
  const [taken] = await tx
    .update(oauthSecrets)
    .set({ usedAt: now })
    .where(and(eq(oauthSecrets.hash, hash), eq(oauthSecrets.kind, kind), isNull(oauthSecrets.usedAt)))
    .returning();
  if (taken) return { secret: taken, reused: false };
  const [used] = await tx.select().from(oauthSecrets).where(and(eq(oauthSecrets.hash, hash), eq(oauthSecrets.kind, kind))).limit(1);
  return used ? { secret: used, reused: true } : null;
}

async function grantOf(tx: Db, id: string): Promise<GrantRow> {
  const [grant] = await tx.select().from(oauthGrants).where(eq(oauthGrants.id, id)).limit(1);
  return grant!;
}

/**
 * Ends the exchange: tokens, or the refusal. A code or refresh token presented a second time
 * means someone else may hold it (RFC 6749 section 4.1.2, OAuth 2.1 section 4.3.1): the whole
 * grant is revoked, after the transaction, so the revocation stands although the call fails.
 */
async function settle(deps: Deps, outcome: Outcome): Promise<TokenResponse> {
  if ("tokens" in outcome) return outcome.tokens;
  const grant = outcome.revoke;
  if (grant && (await endGrant(deps.db, grant.id, deps.clock.now()))) {
    await recordAudit(deps.db, { orgId: grant.orgId, actor: { type: "system" }, action: "oauth_grant_revoked", targets: { id: grant.id }, status: 400, errorCode: "invalid_grant" });
  }
  throw outcome.refuse;
}

const invalidGrant = (why: string) => new OAuthError("invalid_grant", why);

function checkClient(params: URLSearchParams, grant: GrantRow): OAuthError | null {
  const clientId = params.get("client_id");
  if (!clientId) return new OAuthError("invalid_request", "client_id is missing (every client here is public: send client_id in the body)");
  if (clientId !== grant.clientId) return invalidGrant("This grant was issued to another client");
  return null;
}

function checkResource(params: URLSearchParams, grant: GrantRow): OAuthError | null {
  const resource = params.get("resource");
  if (resource !== null && resource !== grant.resource) return new OAuthError("invalid_target", `This grant is for ${grant.resource}, not ${resource}`);
  return null;
}

function checkUsable(grant: GrantRow, now: Date): OAuthError | null {
  if (grant.revokedAt) return invalidGrant("This grant was revoked; authorize again");
  if (grant.expiresAt <= now) return invalidGrant("This grant has expired; authorize again");
  return null;
}

/** grant_type=authorization_code: a code, its PKCE verifier and the same redirect URI, for tokens. */
export async function exchangeCode(deps: Deps, params: URLSearchParams): Promise<TokenResponse> {
  const code = params.get("code");
  const verifier = params.get("code_verifier");
  if (!code) throw new OAuthError("invalid_request", "code is missing");
  if (!verifier) throw new OAuthError("invalid_request", "code_verifier is missing: PKCE is required");
  const now = deps.clock.now();
  const outcome = await deps.db.transaction(async (tx): Promise<Outcome> => {
    const found = await takeSecret(tx as unknown as Db, code, "code", now);
    if (!found) return { refuse: invalidGrant("Unknown authorization code") };
    const grant = await grantOf(tx as unknown as Db, found.secret.grantId);
    if (found.reused) return { refuse: invalidGrant("This authorization code was already used; the grant it made is revoked"), revoke: grant };
    if (found.secret.expiresAt <= now) return { refuse: invalidGrant("This authorization code has expired; authorize again") };
    const problem = checkClient(params, grant) ?? checkUsable(grant, now);
    if (problem) return { refuse: problem };
    if (params.get("redirect_uri") !== found.secret.redirectUri) return { refuse: invalidGrant("redirect_uri differs from the one the code was sent to") };
    if (!verifierMatches(verifier, found.secret.codeChallenge!)) return { refuse: invalidGrant("PKCE verification failed: code_verifier does not match the code_challenge") };
    const target = checkResource(params, grant);
    if (target) return { refuse: target };
    return { tokens: await issue(tx as unknown as Db, grant, now) };
  });
  return settle(deps, outcome);
}

/** grant_type=refresh_token: a new access token and a new refresh token; the old refresh token is spent. */
export async function refreshGrant(deps: Deps, params: URLSearchParams): Promise<TokenResponse> {
  const refresh = params.get("refresh_token");
  if (!refresh) throw new OAuthError("invalid_request", "refresh_token is missing");
  const now = deps.clock.now();
  const outcome = await deps.db.transaction(async (tx): Promise<Outcome> => {
    const found = await takeSecret(tx as unknown as Db, refresh, "refresh", now);
    if (!found) return { refuse: invalidGrant("Unknown or revoked refresh token") };
    const grant = await grantOf(tx as unknown as Db, found.secret.grantId);
    const wrongClient = checkClient(params, grant);
    if (wrongClient) return { refuse: wrongClient };
    if (found.reused) return { refuse: invalidGrant("This refresh token was already used; the grant is revoked (a refresh token is good for one refresh)"), revoke: grant };
    const problem = checkUsable(grant, now) ?? (found.secret.expiresAt <= now ? invalidGrant("This refresh token has expired; authorize again") : null) ?? checkResource(params, grant);
    if (problem) return { refuse: problem };
    await tx.update(oauthGrants).set({ refreshedAt: now }).where(eq(oauthGrants.id, grant.id));
    await recordAudit(tx as unknown as Db, { orgId: grant.orgId, actor: { type: "user", userId: grant.userId }, action: "oauth_grant_refreshed", targets: { id: grant.id }, status: 200, at: now });
    return { tokens: await issue(tx as unknown as Db, grant, now) };
  });
  return settle(deps, outcome);
}

/**
 * An OAuth access token as a bearer: the grant's organization, person, scopes and bucket,
 * for the one resource it was issued for. A token for another audience is refused, so a
 * token minted for one service cannot be replayed at another (RFC 8707, MCP authorization).
 */
export async function authenticateOAuthToken(deps: Deps, token: string, resource: string | undefined): Promise<Caller> {
  const [row] = await deps.db
    .select({ expiresAt: oauthSecrets.expiresAt, grant: oauthGrants })
    .from(oauthSecrets)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthSecrets.grantId))
    .where(and(eq(oauthSecrets.hash, hashSecret(token)), eq(oauthSecrets.kind, "access")))
    .limit(1);
  if (!row) throw errors.unauthorized("Invalid OAuth access token (unknown, or its grant was revoked)");
  const { grant } = row;
  if (grant.revokedAt) throw errors.unauthorized("This OAuth grant was revoked");
  if (row.expiresAt <= deps.clock.now()) throw errors.unauthorized("The OAuth access token has expired: refresh it");
  if (resource !== grant.resource) {
    throw errors.unauthorized(`This OAuth token was issued for ${grant.resource}, not ${resource ?? "this resource"}: ask for one with resource=${resource ?? "<this URL>"}`);
  }
  return {
    orgId: grant.orgId,
    userId: grant.userId,
    apiKeyId: null,
    scopes: new Set(grant.scopes as Scope[]),
    bucketId: grant.bucketId,
    oauthGrantId: grant.id,
    principal: `oauth:${grant.id}`,
  };
}

/**
 * Token revocation (RFC 7009): a client says it is done with a token. A refresh token ends its
 * whole grant (every token the grant issued stops at once); an access token ends alone. A token
 * this service does not know (never issued, expired and swept, already revoked) changes nothing
 * and the answer is the same: the client's aim, the token no longer working, holds (section 2.2).
 * A token issued to another client is refused: only its holder's own client may revoke it.
 */
export async function revokeToken(deps: Deps, params: URLSearchParams): Promise<void> {
  const token = params.get("token");
  if (!token) throw new OAuthError("invalid_request", "token is missing: send the access or refresh token to revoke");
  const clientId = params.get("client_id");
  if (!clientId) throw new OAuthError("invalid_request", "client_id is missing (every client here is public: send client_id in the body)");
  // token_type_hint only speeds up a lookup; one lookup by hash finds either kind.
  const [found] = await deps.db
    .select({ kind: oauthSecrets.kind, grant: oauthGrants })
    .from(oauthSecrets)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthSecrets.grantId))
    .where(and(eq(oauthSecrets.hash, hashSecret(token)), inArray(oauthSecrets.kind, ["access", "refresh"])))
    .limit(1);
  if (!found) return;
  if (found.grant.clientId !== clientId) throw new OAuthError("unauthorized_client", "This token was issued to another client");
  const now = deps.clock.now();
  if (found.kind === "access") {
    await deps.db.delete(oauthSecrets).where(eq(oauthSecrets.hash, hashSecret(token)));
    return;
  }
  if (await endGrant(deps.db, found.grant.id, now)) {
    await recordAudit(deps.db, { orgId: found.grant.orgId, actor: { type: "user", userId: found.grant.userId }, action: "oauth_grant_revoked", targets: { id: found.grant.id }, status: 200, at: now });
  }
}
