import { index, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { SET_ITEM_SOURCES } from "../../contract/sets.ts";
import { bucketRef } from "./buckets.ts";
import { organizationRef } from "./identity.ts";
import { mediaObjects } from "./media.ts";
import { createdAt, updatedAt, uuidKey } from "./columns.ts";

/**
 * Renditions of one base object. A set lives in its base object's bucket (copied here:
 * objects never change bucket), which is what bucket-restricted keys are checked against.
 */
export const mediaSets = pgTable(
  "media_sets",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    bucketId: bucketRef().notNull(),
    name: text("name").notNull(),
    // A purged base object takes its set with it; a soft-deleted one leaves the set marked.
    baseObjectId: uuid("base_object_id").notNull().references(() => mediaObjects.id, { onDelete: "cascade" }),
    generateRequestedAt: timestamp("generate_requested_at", { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("media_sets_org_created_idx").on(t.orgId, t.createdAt), index("media_sets_base_idx").on(t.baseObjectId)],
);

export const mediaSetItems = pgTable(
  "media_set_items",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    setId: uuid("set_id").notNull().references(() => mediaSets.id, { onDelete: "cascade" }),
    // "attached": the caller gave the object; "generated": `generate` renders it (null until then).
    // A purged object leaves the item waiting to be rendered again.
    objectId: uuid("object_id").references(() => mediaObjects.id, { onDelete: "set null" }),
    source: text("source", { enum: SET_ITEM_SOURCES }).notNull(),
    aspectRatio: text("aspect_ratio").notNull(),
    width: integer("width").notNull(),
    height: integer("height").notNull(),
    role: text("role").notNull(),
    createdAt: createdAt(),
    // How the last `generate` ended for this item: cleared when one is asked for, set by the
    // worker when it made the rendition (renderError null) or gave up on it (renderError says why).
    // A caller waiting for a generation reads these; objectId alone cannot tell a fresh
    // rendition from the previous one, nor a failure from work not yet done.
    renderedAt: timestamp("rendered_at", { withTimezone: true }),
    renderError: text("render_error"),
  },
  (t) => [index("media_set_items_set_idx").on(t.setId, t.createdAt), index("media_set_items_object_idx").on(t.objectId)],
);
