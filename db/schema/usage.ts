import { sql } from "drizzle-orm";
import { bigint, boolean, date, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { USAGE_EVENT_TYPES } from "../../contract/usage.ts";
import { bucketRef } from "./buckets.ts";
import { organizationRef, organizations } from "./identity.ts";
import { createdAt, updatedAt, uuidKey } from "./columns.ts";

/**
 * Storage accounting per organization, kept by counters (never by scanning objects). Bytes
 * throughout. A change either updates the counters in its own transaction or appends a
 * storage_deltas row there, which the rollup folds in; reads add the pending rows
 * (domain/usage/counters.ts).
 */
export const orgUsage = pgTable("org_usage", {
  orgId: uuid("org_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  usedStorage: bigint("used_storage", { mode: "number" }).notNull().default(0),
  /** Declared sizes of uploads not yet confirmed (optimistic reservations). */
  reservedStorage: bigint("reserved_storage", { mode: "number" }).notNull().default(0),
  allocatedStorage: bigint("allocated_storage", { mode: "number" }).notNull(),
  objectCount: bigint("object_count", { mode: "number" }).notNull().default(0),
  updatedAt: updatedAt(),
});

/**
 * Changes of the storage counters not folded into org_usage and buckets yet. A confirm or a
 * delete appends one here instead of updating its organization's row, which every other
 * change of the organization would wait for until the commit's WAL flush. No foreign key
 * on the bucket: a bucket may be deleted while the deltas of its objects' deletion are pending.
 */
export const storageDeltas = pgTable(
  "storage_deltas",
  {
    seq: bigint("seq", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    orgId: organizationRef(),
    bucketId: uuid("bucket_id").notNull(),
    usedStorage: bigint("used_storage", { mode: "number" }).notNull().default(0),
    reservedStorage: bigint("reserved_storage", { mode: "number" }).notNull().default(0),
    objectCount: integer("object_count").notNull().default(0),
    at: timestamp("at", { withTimezone: true }).notNull(),
  },
  (t) => [index("storage_deltas_org_idx").on(t.orgId), index("storage_deltas_bucket_idx").on(t.bucketId)],
);

/** Per-month counters: egress and API calls reset with the month by construction. */
export const usageMonthly = pgTable(
  "usage_monthly",
  {
    orgId: organizationRef(),
    /** First day of the month (UTC). */
    month: date("month", { mode: "string" }).notNull(),
    egressBytes: bigint("egress_bytes", { mode: "number" }).notNull().default(0),
    apiCalls: bigint("api_calls", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.month] })],
);

/** A multipart upload's parts as counted: bytes measured in storage, and the most each part URL given out since may carry. */
export interface CountedParts {
  measured: number;
  /** Part number → the most bytes its URL may carry; dropped once the part is seen in storage. */
  pending: Record<string, number>;
}

/**
 * An upload between presign and confirm: what it reserved, and what confirm needs to know
 * (content type, tags, multipart upload id). Confirm or the sweeper removes it.
 *
 * An upload counts greatest(bytes, bound) against the organization's unconfirmed bytes
 * (domain/usage/counters.ts). Rows written before `bound` existed (an instance of an earlier
 * release, during a rolling upgrade) have it null: they count their `bytes`, which is what
 * that release reserved, and expire as before.
 */
export const uploadReservations = pgTable(
  "upload_reservations",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    bucketId: bucketRef().notNull(),
    key: text("key").notNull(),
    /** Reserved against the allocation: the declared size (0 without one). */
    bytes: bigint("bytes", { mode: "number" }).notNull().default(0),
    contentType: text("content_type").notNull(),
    tags: text("tags").array().notNull().default([]),
    uploadId: text("upload_id"),
    /**
     * The most bytes the upload may leave in storage as counted, when more than `bytes`: an
     * upload URL without a size (UPLOAD_UNSIZED_MAX_BYTES), or a multipart upload's parts.
     */
    bound: bigint("bound", { mode: "number" }),
    parts: jsonb("parts").$type<CountedParts>(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("upload_reservations_key_idx").on(t.bucketId, t.key),
    index("upload_reservations_expiry_idx").on(t.expiresAt),
    index("upload_reservations_org_idx").on(t.orgId),
    // The uploads counting more than they reserved, summed on every upload URL's check.
    index("upload_reservations_unsized_idx").on(t.orgId).where(sql`${t.bound} > ${t.bytes}`),
  ],
);

/**
 * One row per organization and UTC day that saw any change: the storage counters as they
 * stood at the end of that day (rewritten by every change, in its transaction) and the day's
 * egress and API calls. A day without a row had no activity: it closed as the previous
 * row's day did, which is how the history fills the gaps.
 */
export const usageDaily = pgTable(
  "usage_daily",
  {
    orgId: organizationRef(),
    day: date("day", { mode: "string" }).notNull(),
    usedStorage: bigint("used_storage", { mode: "number" }).notNull(),
    allocatedStorage: bigint("allocated_storage", { mode: "number" }).notNull(),
    objectCount: bigint("object_count", { mode: "number" }).notNull(),
    egressBytes: bigint("egress_bytes", { mode: "number" }).notNull().default(0),
    apiCalls: bigint("api_calls", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.day] })],
);

/**
 * The usage ledger: one row per change that matters to usage or billing, written in the same
 * transaction as the change. Object ids are kept without a foreign key: the ledger outlives
 * the objects it mentions.
 */
export const usageEvents = pgTable(
  "usage_events",
  {
    id: uuidKey(),
    /** Insertion order: breaks ties between events of the same instant. */
    seq: bigint("seq", { mode: "number" }).notNull().generatedAlwaysAsIdentity(),
    orgId: organizationRef(),
    type: text("type", { enum: USAGE_EVENT_TYPES }).notNull(),
    at: timestamp("at", { withTimezone: true }).notNull(),
    objectId: uuid("object_id"),
    bucketId: uuid("bucket_id"),
    key: text("key"),
    /** The object's size, the egress, or the capacity added. */
    bytes: bigint("bytes", { mode: "number" }),
    /** Change of used storage (uploads, deletes) or of allocated storage (capacity, plans). */
    delta: bigint("delta", { mode: "number" }),
    amountCents: bigint("amount_cents", { mode: "number" }),
    details: jsonb("details").$type<Record<string, unknown>>().notNull().default({}),
    /**
     * Egress not yet added to usage_monthly and usage_daily. A download appends its event
     * and nothing else (no upsert of a per-organization row, so no lock to queue behind);
     * the rollup (domain/usage/egress-rollup.ts) folds these into the counters and clears
     * the flag in one statement, and reads add what is still pending: totals are exact.
     */
    rollupPending: boolean("rollup_pending").notNull().default(false),
  },
  (t) => [
    index("usage_events_org_at_idx").on(t.orgId, t.at.desc(), t.seq.desc()),
    // Stays small: the rollup empties it every few seconds.
    index("usage_events_rollup_pending_idx").on(t.orgId, t.at).where(sql`${t.rollupPending}`),
  ],
);
