import { index, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { MEMBERSHIP_ROLES } from "../../contract/identity.ts";
import { createdAt, uuidKey } from "./columns.ts";

export const organizations = pgTable("organizations", {
  id: uuidKey(),
  name: text("name").notNull(),
  createdAt: createdAt(),
});

/** The owning organization: every row of the organization goes with it. */
export const organizationRef = () => uuid("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" });

export const users = pgTable("users", {
  id: uuidKey(),
  email: text("email"),
  createdAt: createdAt(),
});

export const memberships = pgTable(
  "memberships",
  {
    orgId: organizationRef(),
    userId: uuid("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: MEMBERSHIP_ROLES }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.userId] }), index("memberships_user_idx").on(t.userId)],
);
