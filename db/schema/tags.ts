import { index, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { organizations } from "./identity.ts";
import { mediaObjects } from "./media.ts";

/** Flat labels of an organization. The slug is the tag's identity: two names with one slug are one tag. */
export const tags = pgTable(
  "tags",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    slug: text("slug").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("tags_org_slug_uq").on(t.orgId, t.slug), index("tags_org_name_idx").on(t.orgId, t.name)],
);

export const objectTags = pgTable(
  "object_tags",
  {
    orgId: uuid("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    objectId: uuid("object_id").notNull().references(() => mediaObjects.id, { onDelete: "cascade" }),
    tagId: uuid("tag_id").notNull().references(() => tags.id, { onDelete: "cascade" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.objectId, t.tagId] }), index("object_tags_tag_idx").on(t.tagId)],
);
