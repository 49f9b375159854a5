import { index, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { bucketRef } from "./buckets.ts";
import { organizationRef, users } from "./identity.ts";
import { createdAt, uuidKey } from "./columns.ts";

/**
 * Credentials of services that sign their requests (HTTP Message Signatures, HMAC-SHA256;
 * docs/signed-requests.md). Unlike an API key's, the secret is kept, not a hash of it: checking
 * an HMAC needs the key itself. Scoped like an API key.
 */
export const serviceCredentials = pgTable(
  "service_credentials",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    // Who created it: the user a signed request acts as.
    userId: uuid("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    // The `keyid` of signatures: public, names the credential.
    keyId: text("key_id").notNull(),
    secret: text("secret").notNull(),
    scopes: text("scopes").array().notNull(),
    // A credential restricted to a bucket dies with it.
    bucketId: bucketRef(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("service_credentials_key_id_uq").on(t.keyId), index("service_credentials_org_idx").on(t.orgId, t.createdAt)],
);
