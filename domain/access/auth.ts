import { eq, sql } from "drizzle-orm";
import { errors as joseErrors, jwtVerify } from "jose";
import { z } from "zod";
import { apiKeys, memberships, users } from "../../db/schema/index.ts";
import { type Caller, SCOPES, type Scope } from "./caller.ts";
import type { Deps } from "../core/deps.ts";
import { createOrganization } from "./organizations.ts";
import { errors } from "../core/errors.ts";
import type { KeyCredential } from "../ports/credentials.ts";
import { hashSecret, isSecretShape, sameHash } from "./secrets.ts";
import { ACCESS_PREFIX, authenticateOAuthToken } from "./oauth-tokens.ts";

/**
 * Turns an Authorization header into a Caller, or throws 401.
 * The bearer is an API key's secret (never its accessKeyId), a dashboard JWT (docs/conventions.md#credentials)
 * or an OAuth access token, which is accepted only for `resource`, the audience it was issued for.
 */
export async function authenticate(deps: Deps, authorization: string | null | undefined, resource?: string): Promise<Caller> {
  const token = bearerToken(authorization);
  if (!token) throw errors.unauthorized("Send Authorization: Bearer <secret>");
  if (isSecretShape(token)) return authenticateKey(deps, token.toLowerCase());
  if (token.startsWith(ACCESS_PREFIX)) return authenticateOAuthToken(deps, token, resource);
  if (token.split(".").length === 3) return authenticateJwt(deps, token);
  throw errors.unauthorized("Invalid credential: the bearer value must be an API key secret, a JWT or an OAuth access token");
}

function bearerToken(header: string | null | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match ? match[1]! : null;
}

async function authenticateKey(deps: Deps, secret: string): Promise<Caller> {
  const hash = hashSecret(secret);
  const key = deps.credentials?.get(hash) ?? (await lookUpKey(deps, hash));
  if (key.expiresAt.getTime() <= deps.clock.now().getTime()) throw errors.unauthorized("API key has expired");
  return {
    orgId: key.orgId,
    userId: key.userId,
    apiKeyId: key.id,
    scopes: new Set(key.scopes),
    bucketId: key.bucketId,
    principal: `key:${key.id}`,
  };
}

async function lookUpKey(deps: Deps, hash: string): Promise<KeyCredential> {
  const version = deps.credentials?.version() ?? 0;
  const [key] = await deps.db
    .select({
      id: apiKeys.id,
      orgId: apiKeys.orgId,
      userId: apiKeys.userId,
      secretHash: apiKeys.secretHash,
      scopes: apiKeys.scopes,
      bucketId: apiKeys.bucketId,
      expiresAt: apiKeys.expiresAt,
    })
    .from(apiKeys)
    .where(eq(apiKeys.secretHash, hash))
    .limit(1);
  // The lookup is by hash; the constant-time comparison keeps the check itself timing-safe.
  if (!key || !sameHash(key.secretHash, hash)) throw errors.unauthorized("Invalid API key");
  const found: KeyCredential = { id: key.id, orgId: key.orgId, userId: key.userId, scopes: key.scopes as Scope[], bucketId: key.bucketId, expiresAt: key.expiresAt };
  // Only keys that exist are remembered: unknown secrets must not fill the cache.
  deps.credentials?.put(hash, found, version);
  return found;
}

/** Claims are stored (users.email, organizations.name): text PostgreSQL can hold, no control characters. */
const storableText = (s: string) => s.isWellFormed() && !/\p{Cc}/u.test(s);
const jwtClaims = z.object({
  sub: z.uuid(),
  org_id: z.uuid(),
  email: z.string().max(320).refine(storableText).optional(),
  org_name: z.string().min(1).max(200).refine(storableText).optional(),
});

// Imported once per secret: jose would import a raw secret into a CryptoKey on every verify
// (a few percent of a cheap request's CPU in the profiles of bench/peer.ts).
const hmacKeys = new Map<string, Promise<CryptoKey>>();
const hmacKey = (secret: string) => {
  let key = hmacKeys.get(secret);
  if (!key) hmacKeys.set(secret, (key = crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"])));
  return key;
};

/**
 * Tokens that verified lately, per secret, with their claims and expiry: a dashboard sends the
 * same token on every request until it expires, and verifying it (WebCrypto HMAC, then the
 * claims' schema) was the largest single cost of a cheap request in the profiles of
 * bench/peer.ts. The signature is a function of the token and the secret, so a token that
 * verified once verifies again until `exp`, which is checked on every hit. Bounded: the oldest
 * entry goes first.
 */
const verifiedTokens = new Map<string, Map<string, { claims: z.infer<typeof jwtClaims>; expiresAtMs: number }>>();
const MAX_VERIFIED_TOKENS = 10_000;

async function authenticateJwt(deps: Deps, token: string): Promise<Caller> {
  const secret = deps.config.jwtSecret;
  if (!secret) throw errors.unauthorized("JWT bearer tokens are not enabled on this server");
  let verified = verifiedTokens.get(secret);
  if (!verified) verifiedTokens.set(secret, (verified = new Map()));
  const hit = verified.get(token);
  if (hit && hit.expiresAtMs > deps.clock.now().getTime()) return jwtCaller(deps, hit.claims);
  if (hit) verified.delete(token);
  let payload: unknown;
  try {
    ({ payload } = await jwtVerify(token, await hmacKey(secret), {
      algorithms: ["HS256"],
      requiredClaims: ["exp"],
      currentDate: deps.clock.now(),
    }));
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw errors.unauthorized("JWT has expired");
    throw errors.unauthorized("Invalid JWT");
  }
  const claims = jwtClaims.safeParse(payload);
  if (!claims.success) {
    const bad = claims.error.issues.map((i) => i.path.join(".")).join(", ");
    throw errors.unauthorized(`JWT claims are not valid (${bad}): sub and org_id must be UUIDs; email and org_name text without control characters`);
  }
  const exp = (payload as { exp: number }).exp;
  if (verified.size >= MAX_VERIFIED_TOKENS) verified.delete(verified.keys().next().value!);
  verified.set(token, { claims: claims.data, expiresAtMs: exp * 1000 });
  return jwtCaller(deps, claims.data);
}

async function jwtCaller(deps: Deps, claims: z.infer<typeof jwtClaims>): Promise<Caller> {
  const { sub, org_id, email, org_name } = claims;
  await provision(deps, { userId: sub, orgId: org_id, email: email ?? null, orgName: org_name ?? null });
  return {
    orgId: org_id,
    userId: sub,
    apiKeyId: null,
    // A dashboard user acts with every scope in its organization, on every bucket.
    scopes: new Set(SCOPES),
    bucketId: null,
    principal: `user:${sub}`,
  };
}

// Provisioning is idempotent, so remembering what was done only saves round trips.
const provisioned = new Set<string>();

/** First sight of a user or organization from a JWT creates them; a new organization's first user owns it. */
async function provision(
  deps: Deps,
  p: { userId: string; orgId: string; email: string | null; orgName: string | null },
): Promise<void> {
  const cacheKey = `${p.userId}/${p.orgId}`;
  if (provisioned.has(cacheKey)) return;
  await deps.db.transaction(async (tx) => {
    const org = await createOrganization(deps, tx, { id: p.orgId, name: p.orgName ?? "Organization" });
    await tx
      .insert(users)
      .values({ id: p.userId, email: p.email })
      .onConflictDoUpdate({ target: users.id, set: { email: sql`coalesce(excluded.email, ${users.email})` } });
    await tx
      .insert(memberships)
      .values({ orgId: p.orgId, userId: p.userId, role: org.created ? "owner" : "member" })
      .onConflictDoNothing();
  });
  provisioned.add(cacheKey);
}

/** For tests that drop and recreate data under the same ids. */
export function forgetProvisioned(): void {
  provisioned.clear();
}
