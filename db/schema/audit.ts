import { index, integer, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { uuidKey } from "./columns.ts";
import { organizationRef } from "./identity.ts";

/**
 * Who did what, per organization: every call of a mutating tool and every refused call, as
 * the one tool invoker saw it. Targets are ids only; no input value other than an id, and no
 * secret, is ever written here.
 */
export const auditLog = pgTable(
  "audit_log",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    /** "api_key", "user" (a dashboard JWT), "service_credential" (a signed request) or "system" (the service itself, e.g. disabling a failing webhook endpoint). */
    actorType: text("actor_type", { enum: ["api_key", "user", "service_credential", "system"] }).notNull(),
    apiKeyId: uuid("api_key_id"),
    serviceCredentialId: uuid("service_credential_id"),
    userId: uuid("user_id"),
    /** The tool's name, or for the system the action ("webhook_endpoint_disabled"). */
    action: text("action").notNull(),
    /** Ids the call named or made: `{ id, bucketId, tagIds: [...] }`. */
    targets: jsonb("targets").$type<Record<string, string | string[]>>().notNull().default({}),
    /** The HTTP status the call ended with (MCP calls too). */
    status: integer("status").notNull(),
    errorCode: text("error_code"),
    clientAddress: text("client_address"),
    requestId: text("request_id"),
  },
  (t) => [index("audit_log_org_at_idx").on(t.orgId, t.at, t.id), index("audit_log_at_idx").on(t.at)],
);
