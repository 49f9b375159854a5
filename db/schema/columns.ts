import { timestamp, uuid } from "drizzle-orm/pg-core";

/** Columns most tables share. Times are timestamptz throughout. */
export const uuidKey = () => uuid("id").primaryKey().defaultRandom();
export const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();
export const updatedAt = () => timestamp("updated_at", { withTimezone: true }).notNull().defaultNow();
