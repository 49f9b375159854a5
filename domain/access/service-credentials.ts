import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Deleted } from "../../contract/common.ts";
import type { ServiceCredential, ServiceCredentialWithSecret } from "../../contract/service-credentials.ts";
import { serviceCredentials } from "../../db/schema/index.ts";
import type { Deps } from "../core/deps.ts";
import { type Page, page } from "../core/pagination.ts";
import type { Caller, Scope } from "./caller.ts";
import { deleteOwned, type Owned, visiblePage } from "./owned-rows.ts";
import { newSecret } from "./secrets.ts";
import { assertMayGrant, boundedExpiry, inDays } from "./api-keys.ts";

/**
 * Service credentials: for services that sign their requests (docs/signed-requests.md) rather
 * than send a bearer secret. Granted like API keys (never more scopes or buckets than the
 * creator has; 90 days unless asked, at most 365), and a bucket-restricted caller manages
 * only those of its bucket.
 */
const SECRET_NOTE =
  "Store this secret now: it is shown only once. Sign requests with HMAC-SHA256 keyed with it (docs/signed-requests.md), naming keyId in Signature-Input; it is never sent itself.";

type Row = typeof serviceCredentials.$inferSelect;

const owned: Owned = {
  table: serviceCredentials,
  id: serviceCredentials.id,
  org: serviceCredentials.orgId,
  bucket: serviceCredentials.bucketId,
  createdAt: serviceCredentials.createdAt,
  noun: "Service credential",
  what: "The service credential",
};

const KEY_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** `MSS` and 17 more characters: names the credential in signatures, lists and logs. */
function newKeyId(): string {
  let out = "MSS";
  for (const b of randomBytes(17)) out += KEY_ID_ALPHABET[b % 32];
  return out;
}

function view(row: Row, now: Date): ServiceCredential {
  return {
    id: row.id,
    name: row.name,
    keyId: row.keyId,
    scopes: row.scopes as Scope[],
    bucketId: row.bucketId,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    expired: row.expiresAt.getTime() <= now.getTime(),
  };
}

export async function listServiceCredentials(deps: Deps, caller: Caller, q: { limit: number; offset: number }): Promise<Page<ServiceCredential>> {
  const { rows, total } = await visiblePage(deps.db, caller, owned, deps.db.select().from(serviceCredentials).$dynamic(), q);
  const now = deps.clock.now();
  return page(rows.map((r) => view(r, now)), total, q.offset);
}

export async function createServiceCredential(
  deps: Deps,
  caller: Caller,
  input: { name: string; scopes: Scope[]; bucketId?: string | undefined; expiresInDays: number },
): Promise<ServiceCredentialWithSecret> {
  await assertMayGrant(deps, caller, input, "credentials");
  const secret = newSecret();
  const now = deps.clock.now();
  const { expiresAt, capped } = await boundedExpiry(deps, caller, inDays(now, input.expiresInDays));
  const [row] = await deps.db
    .insert(serviceCredentials)
    .values({
      orgId: caller.orgId,
      userId: caller.userId,
      name: input.name,
      keyId: newKeyId(),
      secret,
      scopes: [...new Set(input.scopes)],
      bucketId: input.bucketId ?? null,
      expiresAt,
      createdAt: now,
    })
    .returning();
  return { ...view(row!, now), secret, note: capped ? `${SECRET_NOTE} ${capped}` : SECRET_NOTE };
}

/** Deleting a credential ends it at once: every signed request looks it up. */
export async function deleteServiceCredential(deps: Deps, caller: Caller, id: string): Promise<Deleted> {
  return deleteOwned(deps.db, caller, owned, id);
}

/** The credential a signature names, whatever its organization (the signature decides the rest). */
export async function credentialByKeyId(deps: Deps, keyId: string): Promise<Row | null> {
  if (keyId.length > 64) return null;
  const [row] = await deps.db.select().from(serviceCredentials).where(eq(serviceCredentials.keyId, keyId)).limit(1);
  return row ?? null;
}
