import { and, eq } from "drizzle-orm";
import type { Deleted } from "../../contract/common.ts";
import type { ApiKey, ApiKeyWithSecret } from "../../contract/identity.ts";
import { apiKeys, buckets, oauthGrants, serviceCredentials } from "../../db/schema/index.ts";
import { type Caller, effectiveScopes, hasScope, type Scope } from "./caller.ts";
import { findOwned, type Owned, visiblePage } from "./owned-rows.ts";
import { assertBucketAllowed, visibleTo } from "./visibility.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { type Page, page } from "../core/pagination.ts";
import { hashSecret, newAccessKeyId, newSecret } from "./secrets.ts";
import { emitEvent } from "../events/emit.ts";

/** What api_key.* events say of a key: never its secret. */
const keyEvent = (row: KeyRow) => ({ apiKeyId: row.id, name: row.name, bucketId: row.bucketId });

/** Key lifetimes: 90 days unless asked otherwise, never more than 365. */
export const DEFAULT_KEY_DAYS = 90;
export const MAX_KEY_DAYS = 365;

const SECRET_NOTE = "Store this secret now: it is shown only once. Send it as 'Authorization: Bearer <secret>'; the accessKeyId only identifies the key.";

type KeyRow = typeof apiKeys.$inferSelect;

function view(row: KeyRow, now: Date): ApiKey {
  return {
    id: row.id,
    name: row.name,
    accessKeyId: row.accessKeyId,
    scopes: row.scopes as Scope[],
    bucketId: row.bucketId,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    rotatedAt: row.rotatedAt?.toISOString() ?? null,
    expired: row.expiresAt.getTime() <= now.getTime(),
  };
}

/** A bucket-restricted caller manages only keys restricted to the same bucket. */
const owned: Owned = { table: apiKeys, id: apiKeys.id, org: apiKeys.orgId, bucket: apiKeys.bucketId, createdAt: apiKeys.createdAt, noun: "API key", what: "The API key" };

export async function listApiKeys(deps: Deps, caller: Caller, q: { limit: number; offset: number }): Promise<Page<ApiKey>> {
  const { rows, total } = await visiblePage(deps.db, caller, owned, deps.db.select().from(apiKeys).$dynamic(), q);
  const now = deps.clock.now();
  return page(rows.map((r) => view(r, now)), total, q.offset);
}

/** How long the credential a caller acts with lives: an API key's, a service credential's or an OAuth grant's expiry; none for a person (a dashboard JWT). */
async function callerExpiry(deps: Deps, caller: Caller): Promise<Date | null> {
  if (caller.apiKeyId) {
    const [key] = await deps.db.select({ expiresAt: apiKeys.expiresAt }).from(apiKeys).where(eq(apiKeys.id, caller.apiKeyId));
    return key?.expiresAt ?? null;
  }
  if (caller.serviceCredentialId) {
    const [cred] = await deps.db.select({ expiresAt: serviceCredentials.expiresAt }).from(serviceCredentials).where(eq(serviceCredentials.id, caller.serviceCredentialId));
    return cred?.expiresAt ?? null;
  }
  // A client a person approved is not the person: what it creates ends with its grant.
  if (caller.oauthGrantId) {
    const [grant] = await deps.db.select({ expiresAt: oauthGrants.expiresAt }).from(oauthGrants).where(eq(oauthGrants.id, caller.oauthGrantId));
    return grant?.expiresAt ?? null;
  }
  return null;
}

export interface BoundedExpiry {
  expiresAt: Date;
  /** Set when the expiry was shortened to the creator's: what the answer's note tells. */
  capped: string | null;
}

/**
 * When a credential created or rotated by `caller` must expire: `wanted`, but never after the
 * credential the caller acts with, so a key cannot mint a longer-lived one (a dashboard user's
 * JWT is not bound: people are not capped by their session's short life). A longer wish is
 * never refused (every 1..365 the API allows stays valid input): the expiry is capped and the
 * answer's note says so.
 */
export async function boundedExpiry(deps: Deps, caller: Caller, wanted: Date): Promise<BoundedExpiry> {
  const limit = await callerExpiry(deps, caller);
  if (!limit || wanted <= limit) return { expiresAt: wanted, capped: null };
  return {
    expiresAt: limit,
    capped: `Its expiry was capped at ${limit.toISOString()} (asked: ${wanted.toISOString()}): a credential never outlives the one that creates or rotates it, and this one expires then.`,
  };
}

export const inDays = (now: Date, days: number) => new Date(now.getTime() + days * 86_400_000);

/**
 * "Cannot grant what you do not have", for any credential a caller creates (API keys, service
 * credentials): its scopes and bucket reach never widen the caller's.
 */
export async function assertMayGrant(deps: Deps, caller: Caller, input: { scopes: Scope[]; bucketId?: string | undefined }, what: "keys" | "credentials"): Promise<void> {
  const missing = [...effectiveScopes(input.scopes)].filter((s) => !hasScope(caller, s));
  if (missing.length > 0) throw errors.forbidden(`Cannot grant scopes this credential lacks: ${missing.join(", ")}`);
  if (caller.bucketId && !input.bucketId) {
    throw errors.forbidden(`A bucket-restricted key can only create ${what} restricted to its bucket; pass its bucketId`);
  }
  if (input.bucketId) {
    const [bucket] = await deps.db
      .select({ id: buckets.id })
      .from(buckets)
      .where(and(eq(buckets.id, input.bucketId), eq(buckets.orgId, caller.orgId)));
    if (!bucket) throw errors.notFound("Bucket");
    assertBucketAllowed(caller, bucket.id);
  }
}

export async function createApiKey(
  deps: Deps,
  caller: Caller,
  input: { name: string; scopes: Scope[]; bucketId?: string | undefined; expiresInDays: number },
): Promise<ApiKeyWithSecret> {
  await assertMayGrant(deps, caller, input, "keys");
  const secret = newSecret();
  const now = deps.clock.now();
  const { expiresAt, capped } = await boundedExpiry(deps, caller, inDays(now, input.expiresInDays));
  const row = await deps.db.transaction(async (tx) => {
    const [created] = await tx
      .insert(apiKeys)
      .values({
        orgId: caller.orgId,
        userId: caller.userId,
        name: input.name,
        accessKeyId: newAccessKeyId(),
        secretHash: hashSecret(secret),
        scopes: [...new Set(input.scopes)],
        bucketId: input.bucketId ?? null,
        expiresAt,
        createdAt: now,
      })
      .returning();
    await emitEvent(tx, { orgId: caller.orgId, type: "api_key.created", at: now, data: keyEvent(created!) });
    return created!;
  });
  deps.jobs.kick();
  return { ...view(row, now), secret, note: noteFor(capped) };
}

const noteFor = (capped: string | null) => (capped ? `${SECRET_NOTE} ${capped}` : SECRET_NOTE);

/**
 * A key of the organization outside a restricted caller's bucket (or unrestricted) exists for
 * it: 403, as for its other bucket-scoped data; other organizations' keys stay 404.
 */
async function assertKeyManageable(deps: Deps, caller: Caller, id: string): Promise<void> {
  await findOwned<KeyRow>(deps.db, caller, owned, id);
}

export async function deleteApiKey(deps: Deps, caller: Caller, id: string): Promise<Deleted> {
  await assertKeyManageable(deps, caller, id);
  await deps.db.transaction(async (tx) => {
    const [deleted] = await tx.delete(apiKeys).where(and(eq(apiKeys.id, id), visibleTo(caller, owned))).returning();
    if (!deleted) throw errors.notFound("API key");
    await emitEvent(tx, { orgId: caller.orgId, type: "api_key.deleted", at: deps.clock.now(), data: keyEvent(deleted) });
  });
  deps.jobs.kick();
  // The secret stops working at once, on every instance.
  await deps.credentials?.forget({ keyId: id });
  return { id, deleted: true };
}

/**
 * A new secret replaces the old one at once; the key keeps its id, scopes and expiry, except
 * that a key rotated by a shorter-lived credential gets the rotator's expiry (as creating it
 * would), so rotation never hands out a secret that outlives the credential asking for it.
 */
export async function rotateApiKey(deps: Deps, caller: Caller, id: string): Promise<ApiKeyWithSecret> {
  const current = await findOwned<KeyRow>(deps.db, caller, owned, id);
  const secret = newSecret();
  const now = deps.clock.now();
  const { expiresAt, capped } = await boundedExpiry(deps, caller, current.expiresAt);
  const row = await deps.db.transaction(async (tx) => {
    const [rotated] = await tx
      .update(apiKeys)
      .set({ secretHash: hashSecret(secret), rotatedAt: now, ...(capped ? { expiresAt } : {}) })
      .where(and(eq(apiKeys.id, id), visibleTo(caller, owned)))
      .returning();
    if (!rotated) throw errors.notFound("API key");
    await emitEvent(tx, { orgId: caller.orgId, type: "api_key.rotated", at: now, data: keyEvent(rotated) });
    return rotated;
  });
  deps.jobs.kick();
  // Rotation ends the old secret at once, on every instance.
  await deps.credentials?.forget({ keyId: id });
  return { ...view(row, now), secret, note: noteFor(capped) };
}
