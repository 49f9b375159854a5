import { index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { buckets } from "./buckets.ts";
import { organizations } from "./identity.ts";
import { mediaObjects } from "./media.ts";

/** `bucketId` set: every clip must come from that bucket, and keys restricted to it may use the storyboard. */
export const storyboards = pgTable(
  "storyboards",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    bucketId: uuid("bucket_id").references(() => buckets.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("storyboards_org_created_idx").on(t.orgId, t.createdAt)],
);

export const storyboardClips = pgTable(
  "storyboard_clips",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    storyboardId: uuid("storyboard_id").notNull().references(() => storyboards.id, { onDelete: "cascade" }),
    objectId: uuid("object_id").notNull().references(() => mediaObjects.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    note: text("note").notNull().default(""),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // Not deferrable, so it is checked row by row: moves park clips on negative positions first
    // (domain/storyboards.ts). Every mutation also locks the storyboard row.
    uniqueIndex("storyboard_clips_position_uq").on(t.storyboardId, t.position),
    index("storyboard_clips_object_idx").on(t.objectId),
  ],
);
