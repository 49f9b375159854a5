import { index, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { organizationRef } from "./identity.ts";
import { mediaObjectRef } from "./media.ts";
import { createdAt, uuidKey } from "./columns.ts";

/** Flat labels of an organization. The slug is the tag's identity: two names with one slug are one tag. */
export const tags = pgTable(
  "tags",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    name: text("name").notNull(),
    slug: text("slug").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("tags_org_slug_uq").on(t.orgId, t.slug), index("tags_org_name_idx").on(t.orgId, t.name)],
);

export const objectTags = pgTable(
  "object_tags",
  {
    orgId: organizationRef(),
    objectId: mediaObjectRef().notNull(),
    tagId: uuid("tag_id").notNull().references(() => tags.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.objectId, t.tagId] }), index("object_tags_tag_idx").on(t.tagId)],
);
