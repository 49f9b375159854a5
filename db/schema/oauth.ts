import { index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { apiKeys } from "./api-keys.ts";
import { bucketRef } from "./buckets.ts";
import { createdAt, uuidKey } from "./columns.ts";
import { organizationRef, users } from "./identity.ts";

/**
 * OAuth 2.1 for MCP hosts (domain/access/oauth-*.ts). Clients register themselves (RFC 7591)
 * and belong to no organization; a grant is what a signed-in person allowed one client in
 * their organization. Codes and tokens are stored as SHA-256 hashes, never in the clear.
 */
export const oauthClients = pgTable("oauth_clients", {
  /** The client_id handed out at registration ("mcc_" and random characters). */
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  redirectUris: text("redirect_uris").array().notNull(),
  createdAt: createdAt(),
});

export const oauthGrants = pgTable(
  "oauth_grants",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    userId: uuid("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    clientId: text("client_id").notNull().references(() => oauthClients.id, { onDelete: "cascade" }),
    // The API key a person approved with: the grant ends with it (null for a dashboard JWT).
    apiKeyId: uuid("api_key_id").references(() => apiKeys.id, { onDelete: "cascade" }),
    scopes: text("scopes").array().notNull(),
    bucketId: bucketRef(),
    /** The RFC 8707 resource (audience) its tokens are for: `<base>/mcp` or `<base>`. */
    resource: text("resource").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    refreshedAt: timestamp("refreshed_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  // By client: the sweep of unused clients asks whether one has a grant, and deleting a client deletes its grants.
  (t) => [index("oauth_grants_org_idx").on(t.orgId, t.createdAt), index("oauth_grants_client_idx").on(t.clientId)],
);

/** Authorization codes (one use, minutes long) and access and refresh tokens, by hash. */
export const oauthSecrets = pgTable(
  "oauth_secrets",
  {
    hash: text("hash").primaryKey(),
    grantId: uuid("grant_id").notNull().references(() => oauthGrants.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["code", "access", "refresh"] }).notNull(),
    /** Codes only: where the code was sent and the PKCE challenge (S256) it answers. */
    redirectUri: text("redirect_uri"),
    codeChallenge: text("code_challenge"),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    /** Set when a code was exchanged or a refresh token rotated: presenting it again revokes the grant. */
    usedAt: timestamp("used_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [index("oauth_secrets_grant_idx").on(t.grantId)],
);
