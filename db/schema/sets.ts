import { index, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { SET_ITEM_SOURCES } from "../../contract/sets.ts";
import { buckets } from "./buckets.ts";
import { organizations } from "./identity.ts";
import { mediaObjects } from "./media.ts";

/**
 * Renditions of one base object. A set lives in its base object's bucket (copied here:
 * objects never change bucket), which is what bucket-restricted keys are checked against.
 */
export const mediaSets = pgTable(
  "media_sets",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    bucketId: uuid("bucket_id").notNull().references(() => buckets.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    // A purged base object takes its set with it; a soft-deleted one leaves the set marked.
    baseObjectId: uuid("base_object_id").notNull().references(() => mediaObjects.id, { onDelete: "cascade" }),
    generateRequestedAt: timestamp("generate_requested_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("media_sets_org_created_idx").on(t.orgId, t.createdAt), index("media_sets_base_idx").on(t.baseObjectId)],
);

export const mediaSetItems = pgTable(
  "media_set_items",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    setId: uuid("set_id").notNull().references(() => mediaSets.id, { onDelete: "cascade" }),
    // "attached": the caller gave the object; "generated": `generate` renders it (null until then).
    // A purged object leaves the item waiting to be rendered again.
    objectId: uuid("object_id").references(() => mediaObjects.id, { onDelete: "set null" }),
    source: text("source", { enum: SET_ITEM_SOURCES }).notNull(),
    aspectRatio: text("aspect_ratio").notNull(),
    width: integer("width").notNull(),
    height: integer("height").notNull(),
    role: text("role").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("media_set_items_set_idx").on(t.setId, t.createdAt), index("media_set_items_object_idx").on(t.objectId)],
);
