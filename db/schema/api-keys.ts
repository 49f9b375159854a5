import { index, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { bucketRef } from "./buckets.ts";
import { organizationRef, users } from "./identity.ts";
import { createdAt, uuidKey } from "./columns.ts";

export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    userId: uuid("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    accessKeyId: text("access_key_id").notNull(),
    // SHA-256 of the secret, hex. The secret itself is never stored.
    secretHash: text("secret_hash").notNull(),
    scopes: text("scopes").array().notNull(),
    // A key restricted to a bucket dies with it.
    bucketId: bucketRef(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    rotatedAt: timestamp("rotated_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("api_keys_access_key_id_uq").on(t.accessKeyId),
    uniqueIndex("api_keys_secret_hash_uq").on(t.secretHash),
    index("api_keys_org_idx").on(t.orgId, t.createdAt),
  ],
);

