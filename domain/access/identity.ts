import { count, eq, sql } from "drizzle-orm";
import type { Me } from "../../contract/identity.ts";
import { apiKeys, memberships, oauthGrants, organizations, serviceCredentials, users } from "../../db/schema/index.ts";
import { type Caller, effectiveScopes } from "./caller.ts";
import type { Deps } from "../core/deps.ts";
import { createOrganization } from "./organizations.ts";
import { errors } from "../core/errors.ts";
import { hashSecret, newAccessKeyId, newSecret } from "./secrets.ts";

export async function me(deps: Deps, caller: Caller): Promise<Me> {
  const [[user], [org], orgs, [key], [service], [grant]] = await Promise.all([
    deps.db.select().from(users).where(eq(users.id, caller.userId)),
    deps.db.select().from(organizations).where(eq(organizations.id, caller.orgId)),
    deps.db
      .select({ organizationId: memberships.orgId, organizationName: organizations.name, role: memberships.role })
      .from(memberships)
      .innerJoin(organizations, eq(organizations.id, memberships.orgId))
      .where(eq(memberships.userId, caller.userId))
      .orderBy(organizations.name),
    caller.apiKeyId
      ? deps.db.select().from(apiKeys).where(eq(apiKeys.id, caller.apiKeyId))
      : Promise.resolve([] as (typeof apiKeys.$inferSelect)[]),
    caller.serviceCredentialId
      ? deps.db.select().from(serviceCredentials).where(eq(serviceCredentials.id, caller.serviceCredentialId))
      : Promise.resolve([] as (typeof serviceCredentials.$inferSelect)[]),
    caller.oauthGrantId
      ? deps.db.select({ clientId: oauthGrants.clientId, expiresAt: oauthGrants.expiresAt }).from(oauthGrants).where(eq(oauthGrants.id, caller.oauthGrantId))
      : Promise.resolve([] as { clientId: string; expiresAt: Date }[]),
  ]);
  if (!user || !org) throw errors.unauthorized("The credential's user or organization no longer exists");
  return {
    user: { id: user.id, email: user.email },
    organization: { id: org.id, name: org.name },
    memberships: orgs,
    credential: {
      type: caller.apiKeyId ? "api_key" : caller.serviceCredentialId ? "service_credential" : caller.oauthGrantId ? "oauth" : "jwt",
      apiKeyId: caller.apiKeyId,
      serviceCredentialId: caller.serviceCredentialId ?? null,
      oauthGrantId: caller.oauthGrantId ?? null,
      accessKeyId: key?.accessKeyId ?? service?.keyId ?? grant?.clientId ?? null,
      scopes: [...effectiveScopes(caller.scopes)],
      bucketId: caller.bucketId,
      // For OAuth, the grant's end: the access token itself lasts an hour and is refreshed until then.
      expiresAt: (key ?? service ?? grant)?.expiresAt.toISOString() ?? null,
    },
  };
}

/**
 * First start on an empty database: organization "Default", its owner and an admin key.
 * The secret is INITIAL_ADMIN_KEY when set, else random; it is returned so the caller can
 * print it once. Returns null when the database already has an organization.
 */
export async function bootstrap(
  deps: Deps,
  initialSecret: string | null,
): Promise<{ orgId: string; accessKeyId: string; secret: string; generated: boolean } | null> {
  return deps.db.transaction(async (tx) => {
    // Serialize concurrent first starts of several instances.
    await tx.execute(sql`select pg_advisory_xact_lock(727002)`);
    const [{ n } = { n: 0 }] = await tx.select({ n: count() }).from(organizations);
    if (n > 0) return null;
    const org = await createOrganization(deps, tx, { name: "Default" });
    const [user] = await tx.insert(users).values({ email: null }).returning();
    await tx.insert(memberships).values({ orgId: org.id, userId: user!.id, role: "owner" });
    const secret = initialSecret ?? newSecret();
    const accessKeyId = newAccessKeyId();
    const now = deps.clock.now();
    await tx.insert(apiKeys).values({
      orgId: org.id,
      userId: user!.id,
      name: "Initial admin key",
      accessKeyId,
      secretHash: hashSecret(secret),
      scopes: ["admin"],
      expiresAt: new Date(now.getTime() + 365 * 86_400_000),
      createdAt: now,
    });
    return { orgId: org.id, accessKeyId, secret, generated: initialSecret === null };
  });
}
