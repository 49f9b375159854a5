import type { mediaObjects } from "../../db/schema/index.ts";

/** A media_objects row. Its view, as every answer shows it, is written by PostgreSQL (view-rows.ts). */
export type MediaRow = typeof mediaObjects.$inferSelect;
