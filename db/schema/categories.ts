import { type AnyPgColumn, index, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { organizationRef } from "./identity.ts";
import { mediaObjectRef } from "./media.ts";
import { createdAt, uuidKey } from "./columns.ts";

/**
 * A tree per organization. Nodes only attach to existing nodes (there is no move), so a
 * cycle cannot be built. Deleting a node moves its children to the root (the domain does it
 * explicitly; `set null` is the backstop).
 */
export const categories = pgTable(
  "categories",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    parentId: uuid("parent_id").references((): AnyPgColumn => categories.id, { onDelete: "set null" }),
    name: text("name").notNull(),
    // Unique per organization; a name used elsewhere in the tree gets a numeric suffix.
    slug: text("slug").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("categories_org_slug_uq").on(t.orgId, t.slug), index("categories_parent_idx").on(t.parentId)],
);

export const objectCategories = pgTable(
  "object_categories",
  {
    orgId: organizationRef(),
    objectId: mediaObjectRef().notNull(),
    categoryId: uuid("category_id").notNull().references(() => categories.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.objectId, t.categoryId] }), index("object_categories_category_idx").on(t.categoryId)],
);
