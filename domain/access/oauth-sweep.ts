import { and, eq, inArray, lt, notExists, sql } from "drizzle-orm";
import { oauthClients, oauthGrants, oauthSecrets } from "../../db/schema/index.ts";
import type { Deps } from "../core/deps.ts";
import { ACCESS_TOKEN_SECONDS } from "./oauth-tokens.ts";

/**
 * A code or token this long past its expiry is deleted: until then, presenting it is told
 * "expired" rather than "unknown", and a code replayed soon after use still revokes its grant.
 * Revoked grants' codes and tokens are gone already (endGrant deletes them).
 */
export const OAUTH_SECRET_GRACE_SECONDS = ACCESS_TOKEN_SECONDS;
/**
 * A client that registered and got no grant this long after is deleted: hosts register
 * right before sending the person to consent, so one that never came back was abandoned
 * (or was someone filling the table through the open registration endpoint).
 */
export const UNUSED_CLIENT_HOURS = 24;
const BATCH = 1000;
const MAX_BATCHES = 20;

/**
 * Part of the periodic maintenance (worker/maintenance.ts), for every organization at once.
 * Bounded: at most MAX_BATCHES batches of `limit` rows each of secrets and of clients per pass.
 * Safe on several instances at once: each batch locks the rows it takes and skips rows another
 * instance holds, so two sweeps never wait on each other or count a row twice.
 */
export async function sweepOAuth(deps: Pick<Deps, "db" | "clock">, limit = BATCH): Promise<{ secrets: number; clients: number }> {
  const swept = { secrets: 0, clients: 0 };
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const n = await sweepSecrets(deps, limit);
    swept.secrets += n;
    if (n < limit) break;
  }
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const n = await sweepClients(deps, limit);
    swept.clients += n;
    if (n < limit) break;
  }
  return swept;
}

/** Expired codes, access tokens and refresh tokens (spent ones included: they only served to detect a replay). */
async function sweepSecrets(deps: Pick<Deps, "db" | "clock">, limit: number): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - OAUTH_SECRET_GRACE_SECONDS * 1000);
  const due = deps.db.select({ hash: oauthSecrets.hash }).from(oauthSecrets).where(lt(oauthSecrets.expiresAt, cutoff)).limit(limit).for("update", { skipLocked: true });
  const gone = await deps.db.delete(oauthSecrets).where(inArray(oauthSecrets.hash, due)).returning({ hash: oauthSecrets.hash });
  return gone.length;
}

/**
 * Clients with no grant at all, registered before the cutoff. An approval under way holds a
 * share lock on its client's row until it commits (approveGrant): the row is skipped here, so
 * a client is never deleted, with its grants, under a fresh approval.
 */
async function sweepClients(deps: Pick<Deps, "db" | "clock">, limit: number): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - UNUSED_CLIENT_HOURS * 3_600_000);
  const granted = deps.db.select({ one: sql`1` }).from(oauthGrants).where(eq(oauthGrants.clientId, oauthClients.id));
  const due = deps.db
    .select({ id: oauthClients.id })
    .from(oauthClients)
    .where(and(lt(oauthClients.createdAt, cutoff), notExists(granted)))
    .limit(limit)
    .for("update", { skipLocked: true });
  const gone = await deps.db
    .delete(oauthClients)
    .where(and(inArray(oauthClients.id, due), notExists(granted)))
    .returning({ id: oauthClients.id });
  return gone.length;
}
