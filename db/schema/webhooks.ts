import { sql } from "drizzle-orm";
import { boolean, index, integer, json, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { DELIVERY_STATES } from "../../contract/webhooks.ts";
import { createdAt, updatedAt, uuidKey } from "./columns.ts";
import { organizationRef } from "./identity.ts";

const at = (name: string) => timestamp(name, { withTimezone: true });

/**
 * Where an organization wants its events sent. The signing secret is kept as it is: signing
 * needs it (unlike API keys, which only need to be recognised). During a rotation the previous
 * secret signs too, until `previous_secret_expires_at`.
 */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    url: text("url").notNull(),
    description: text("description").notNull().default(""),
    /** Event types sent here; empty: every type. */
    eventTypes: text("event_types").array().notNull().default([]),
    secret: text("secret").notNull(),
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: at("previous_secret_expires_at"),
    enabled: boolean("enabled").notNull().default(true),
    /** Why a disabled endpoint is disabled: "manual", or "failing" when a delivery exhausted its attempts. */
    disabledReason: text("disabled_reason"),
    disabledAt: at("disabled_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("webhook_endpoints_org_idx").on(t.orgId, t.createdAt)],
);

/** One event as sent: `payload` is the JSON body every endpoint receives (json, not jsonb: its keys keep their order). */
export const webhookEvents = pgTable(
  "webhook_events",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    type: text("type").notNull(),
    payload: json("payload").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("webhook_events_created_idx").on(t.createdAt)],
);

/**
 * One event on its way to one endpoint. Each attempt is a `webhooks.deliver` job; a failed
 * attempt records itself and enqueues the next one at `next_attempt_at`, in one transaction.
 * `attempting_until` is the claim of the run sending right now: a run that died holding it
 * (a killed worker) leaves a claim that lapses, and the job's rerun takes over.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    eventId: uuid("event_id").notNull().references(() => webhookEvents.id, { onDelete: "cascade" }),
    endpointId: uuid("endpoint_id").notNull().references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    status: text("status", { enum: DELIVERY_STATES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: at("next_attempt_at").defaultNow(),
    attemptingUntil: at("attempting_until"),
    /** Which run holds the claim: only that run may record the attempt's outcome. */
    claimId: uuid("claim_id"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    completedAt: at("completed_at"),
  },
  (t) => [
    index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.createdAt),
    index("webhook_deliveries_created_idx").on(t.createdAt),
    index("webhook_deliveries_pending_idx").on(t.endpointId).where(sql`${t.status} = 'pending'`),
  ],
);

/** What happened on each try: the receiver's status code, how long it took, or why it failed. */
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    deliveryId: uuid("delivery_id").notNull().references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    startedAt: at("started_at").notNull(),
    statusCode: integer("status_code"),
    latencyMs: integer("latency_ms").notNull(),
    succeeded: boolean("succeeded").notNull(),
    error: text("error"),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.attempt)],
);
