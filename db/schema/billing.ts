import { bigint, boolean, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { organizationRef, organizations } from "./identity.ts";
import { updatedAt, uuidKey } from "./columns.ts";

/**
 * An organization's plan, purchased capacity, auto-capacity settings and its link to the
 * payment provider. Invariant kept by every writer: org_usage.allocated_storage equals the
 * plan's included storage plus `extraStorage`.
 */
export const billingAccounts = pgTable(
  "billing_accounts",
  {
    orgId: uuid("org_id")
      .primaryKey()
      .references(() => organizations.id, { onDelete: "cascade" }),
    planKey: text("plan_key").notNull(),
    /** active, trialing, past_due, canceled, ... (the provider's subscription status). */
    status: text("status").notNull().default("active"),
    /** Capacity bought on top of the plan, bytes. It stays with the organization across plans. */
    extraStorage: bigint("extra_storage", { mode: "number" }).notNull().default(0),
    autoCapacityEnabled: boolean("auto_capacity_enabled").notNull().default(false),
    autoCapacityIncrementGb: integer("auto_capacity_increment_gb").notNull().default(10),
    autoCapacityThresholdPct: integer("auto_capacity_threshold_pct").notNull().default(90),
    autoCapacityMaxMonthlySpendCents: bigint("auto_capacity_max_monthly_spend_cents", { mode: "number" }).notNull().default(0),
    providerCustomerId: text("provider_customer_id"),
    providerSubscriptionId: text("provider_subscription_id"),
    currentPeriodStart: timestamp("current_period_start", { withTimezone: true }),
    currentPeriodEnd: timestamp("current_period_end", { withTimezone: true }),
    /** Creation time of the last subscription event applied: older ones arriving late are ignored. */
    providerUpdatedAt: timestamp("provider_updated_at", { withTimezone: true }),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("billing_accounts_customer_uq").on(t.providerCustomerId)],
);

/** What capacity cost, per purchase: the monthly spend cap sums these. Cents. */
export const billingCharges = pgTable(
  "billing_charges",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    kind: text("kind", { enum: ["capacity", "auto_capacity"] }).notNull(),
    gb: integer("gb").notNull(),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("billing_charges_org_created_idx").on(t.orgId, t.createdAt)],
);

/**
 * Provider events already applied, by event id: the row is inserted in the same transaction
 * as the event's effect, so a redelivery (even a concurrent one) finds it and does nothing.
 */
export const paymentEvents = pgTable("payment_events", {
  eventId: text("event_id").primaryKey(),
  type: text("type").notNull(),
  /** The organization it applied to; null when it named none we know (acknowledged, ignored). */
  orgId: uuid("org_id").references(() => organizations.id, { onDelete: "set null" }),
  receivedAt: timestamp("received_at", { withTimezone: true }).notNull(),
});
