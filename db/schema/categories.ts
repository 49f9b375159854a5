import { type AnyPgColumn, index, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { organizations } from "./identity.ts";
import { mediaObjects } from "./media.ts";

/**
 * A tree per organization. Nodes only attach to existing nodes (there is no move), so a
 * cycle cannot be built. Deleting a node moves its children to the root (the domain does it
 * explicitly; `set null` is the backstop).
 */
export const categories = pgTable(
  "categories",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    parentId: uuid("parent_id").references((): AnyPgColumn => categories.id, { onDelete: "set null" }),
    name: text("name").notNull(),
    // Unique per organization; a name used elsewhere in the tree gets a numeric suffix.
    slug: text("slug").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("categories_org_slug_uq").on(t.orgId, t.slug), index("categories_parent_idx").on(t.parentId)],
);

export const objectCategories = pgTable(
  "object_categories",
  {
    orgId: uuid("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    objectId: uuid("object_id").notNull().references(() => mediaObjects.id, { onDelete: "cascade" }),
    categoryId: uuid("category_id").notNull().references(() => categories.id, { onDelete: "cascade" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.objectId, t.categoryId] }), index("object_categories_category_idx").on(t.categoryId)],
);
