import { bigint, index, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { organizations } from "./identity.ts";

export const buckets = pgTable(
  "buckets",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** Live objects in the bucket, kept with org_usage.object_count (domain/usage.ts addStored): list totals without counting. */
    objectCount: bigint("object_count", { mode: "number" }).notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("buckets_org_name_uq").on(t.orgId, t.name), index("buckets_org_created_idx").on(t.orgId, t.createdAt)],
);
