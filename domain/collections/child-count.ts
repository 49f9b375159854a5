import { type SQL, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";

/**
 * How many rows of `child` belong to each row of a list (a set's items, a storyboard's clips),
 * as a select field: a correlated subquery. `where` stays one nested fragment on purpose:
 * drizzle writes the columns at the top level of a select field without their table when the
 * select reads one table only, so `storyboard_id = id` inside the subquery compared the
 * clip's own columns and counted nothing (every storyboard listed with 0 clips).
 */
export const childCount = (child: PgTable, where: SQL | undefined) => sql<number>`(select count(*) from ${child} where ${where})`.mapWith(Number);
