import { and, eq, isNull } from "drizzle-orm";
import { randomBytes } from "node:crypto";
import type { Db } from "../../db/client.ts";
import { oauthClients, oauthGrants, oauthSecrets } from "../../db/schema/index.ts";
import { actorOf, recordAudit } from "../audit/audit-writer.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { type Page, page } from "../core/pagination.ts";
import { assertMayGrant, boundedExpiry, inDays } from "./api-keys.ts";
import type { Caller, Scope } from "./caller.ts";
import { type AuthorizationRequest, redirectTo } from "./oauth-requests.ts";
import { findOwned, type Owned, visiblePage } from "./owned-rows.ts";
import { hashSecret } from "./secrets.ts";

/** How long a grant lasts unless refreshed tokens end sooner (never past the approving key's expiry). */
export const GRANT_DAYS = 90;
/** An authorization code must be exchanged within this (RFC 6749 recommends at most 10 minutes). */
export const CODE_SECONDS = 300;

export interface OAuthGrantView {
  id: string;
  clientId: string;
  clientName: string;
  userId: string;
  scopes: Scope[];
  bucketId: string | null;
  resource: string;
  createdAt: string;
  refreshedAt: string | null;
  revokedAt: string | null;
  expiresAt: string;
  active: boolean;
}

const owned: Owned = { table: oauthGrants, id: oauthGrants.id, org: oauthGrants.orgId, bucket: oauthGrants.bucketId, createdAt: oauthGrants.createdAt, noun: "OAuth grant", what: "The OAuth grant" };

type GrantRow = typeof oauthGrants.$inferSelect;

function view(row: GrantRow, clientName: string, now: Date): OAuthGrantView {
  return {
    id: row.id,
    clientId: row.clientId,
    clientName,
    userId: row.userId,
    scopes: row.scopes as Scope[],
    bucketId: row.bucketId,
    resource: row.resource,
    createdAt: row.createdAt.toISOString(),
    refreshedAt: row.refreshedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
    expiresAt: row.expiresAt.toISOString(),
    active: row.revokedAt === null && row.expiresAt > now,
  };
}

/**
 * Only a person's own credential (an API key or a dashboard JWT) approves a client: a token a
 * client already holds, or a signing service, cannot hand out more grants.
 */
function assertPerson(caller: Caller): void {
  if (caller.oauthGrantId) throw errors.forbidden("An OAuth access token cannot approve clients: sign in to the console with an API key or JWT");
  if (caller.serviceCredentialId) throw errors.forbidden("A service credential cannot approve clients: sign in to the console with an API key or JWT");
}

/**
 * The person approved: a grant with the scopes and bucket they picked (never more than their
 * own credential has, nor more than the client asked for) and a one-use code for the client.
 */
export async function approveGrant(deps: Deps, caller: Caller, issuer: string, req: AuthorizationRequest, choice: { scopes: Scope[]; bucketId?: string | undefined }): Promise<{ redirect: string; grantId: string }> {
  assertPerson(caller);
  const beyond = choice.scopes.filter((s) => !req.scopes.includes(s));
  if (beyond.length > 0) throw errors.forbidden(`${req.client.name} did not ask for ${beyond.join(", ")}; it asked for ${req.scopes.join(", ")}`);
  await assertMayGrant(deps, caller, choice, "credentials");
  const now = deps.clock.now();
  const { expiresAt } = await boundedExpiry(deps, caller, inDays(now, GRANT_DAYS));
  const code = randomBytes(32).toString("base64url");
  const grantId = await deps.db.transaction(async (tx) => {
    // Held until commit, so the sweep of unused clients (oauth-sweep.ts) skips this one; if the
    // sweep took it first, the client is gone and the person hears so instead of a failed insert.
    const [client] = await tx.select({ id: oauthClients.id }).from(oauthClients).where(eq(oauthClients.id, req.client.id)).for("share");
    if (!client) throw errors.badRequest(`${req.client.name} is no longer registered here (unused for too long): the application must register again`);
    const [grant] = await tx
      .insert(oauthGrants)
      .values({
        orgId: caller.orgId,
        userId: caller.userId,
        clientId: req.client.id,
        apiKeyId: caller.apiKeyId,
        scopes: [...new Set(choice.scopes)],
        bucketId: choice.bucketId ?? null,
        resource: req.resource,
        expiresAt,
        createdAt: now,
      })
      .returning({ id: oauthGrants.id });
    await tx.insert(oauthSecrets).values({
      hash: hashSecret(code),
      grantId: grant!.id,
      kind: "code",
      redirectUri: req.redirectUri,
      codeChallenge: req.codeChallenge,
      expiresAt: new Date(now.getTime() + CODE_SECONDS * 1000),
      createdAt: now,
    });
    await recordAudit(tx as unknown as Db, { orgId: caller.orgId, actor: actorOf(caller), action: "oauth_grant_created", targets: { id: grant!.id }, status: 201, at: now });
    return grant!.id;
  });
  return { redirect: redirectTo(req.redirectUri, issuer, req.state, { code }), grantId };
}

/** The person said no: the client learns it at its redirect URI. */
export function denyGrant(issuer: string, req: AuthorizationRequest): { redirect: string } {
  return { redirect: redirectTo(req.redirectUri, issuer, req.state, { error: "access_denied", error_description: "The person declined" }) };
}

export async function listGrants(deps: Deps, caller: Caller, q: { limit: number; offset: number }): Promise<Page<OAuthGrantView>> {
  const rows = deps.db.select({ grant: oauthGrants, clientName: oauthClients.name }).from(oauthGrants).innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId)).$dynamic();
  const found = await visiblePage(deps.db, caller, owned, rows, q);
  const now = deps.clock.now();
  return page(found.rows.map((r) => view(r.grant, r.clientName, now)), found.total, q.offset);
}

/** Revokes a grant: its tokens stop working at once, and its refresh token refreshes nothing. Revoking twice changes nothing. */
export async function revokeGrant(deps: Deps, caller: Caller, id: string): Promise<OAuthGrantView> {
  await findOwned<GrantRow>(deps.db, caller, owned, id);
  const now = deps.clock.now();
  await endGrant(deps.db, id, now);
  const [row] = await deps.db.select({ grant: oauthGrants, clientName: oauthClients.name }).from(oauthGrants).innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId)).where(eq(oauthGrants.id, id));
  if (!row) throw errors.notFound("OAuth grant");
  return view(row.grant, row.clientName, now);
}

/** Marks a grant revoked (if it was not) and drops its codes and tokens; true when this call revoked it. */
export async function endGrant(db: Db, id: string, now: Date): Promise<boolean> {
  return db.transaction(async (tx) => {
    const revoked = await tx.update(oauthGrants).set({ revokedAt: now }).where(and(eq(oauthGrants.id, id), isNull(oauthGrants.revokedAt))).returning({ id: oauthGrants.id });
    await tx.delete(oauthSecrets).where(eq(oauthSecrets.grantId, id));
    return revoked.length > 0;
  });
}
