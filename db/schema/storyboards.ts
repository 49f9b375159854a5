import { index, integer, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { bucketRef } from "./buckets.ts";
import { organizationRef } from "./identity.ts";
import { mediaObjectRef } from "./media.ts";
import { createdAt, updatedAt, uuidKey } from "./columns.ts";

/** `bucketId` set: every clip must come from that bucket, and keys restricted to it may use the storyboard. */
export const storyboards = pgTable(
  "storyboards",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    bucketId: bucketRef(),
    name: text("name").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("storyboards_org_created_idx").on(t.orgId, t.createdAt)],
);

export const storyboardClips = pgTable(
  "storyboard_clips",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    storyboardId: uuid("storyboard_id").notNull().references(() => storyboards.id, { onDelete: "cascade" }),
    objectId: mediaObjectRef().notNull(),
    position: integer("position").notNull(),
    note: text("note").notNull().default(""),
    createdAt: createdAt(),
  },
  (t) => [
    // Not deferrable, so it is checked row by row: moves park clips on negative positions first
    // (domain/collections/storyboards.ts). Every mutation also locks the storyboard row.
    uniqueIndex("storyboard_clips_position_uq").on(t.storyboardId, t.position),
    index("storyboard_clips_object_idx").on(t.objectId),
  ],
);
