import { bigint, index, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { organizationRef } from "./identity.ts";
import { createdAt, uuidKey } from "./columns.ts";

export const buckets = pgTable(
  "buckets",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    name: text("name").notNull(),
    /** Live objects in the bucket, kept with org_usage.object_count (domain/usage/storage-deltas.ts: changes appended, then folded; reads add what is pending): list totals without counting. */
    objectCount: bigint("object_count", { mode: "number" }).notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("buckets_org_name_uq").on(t.orgId, t.name), index("buckets_org_created_idx").on(t.orgId, t.createdAt)],
);

/** A bucket the row belongs to (it goes with the bucket); add `.notNull()` where every row has one. */
export const bucketRef = () => uuid("bucket_id").references(() => buckets.id, { onDelete: "cascade" });
