import { and, count, desc, eq } from "drizzle-orm";
import type { AnyPgColumn, PgSelect, PgTable } from "drizzle-orm/pg-core";
import type { Deleted } from "../../contract/common.ts";
import type { Db } from "../../db/client.ts";
import { errors } from "../core/errors.ts";
import type { Caller } from "./caller.ts";
import { assertBucketAllowed, visibleTo } from "./visibility.ts";

/** A table of rows that belong to an organization and may be bound to one bucket (`bucket` is the id itself for buckets). */
export interface Owned {
  table: PgTable;
  id: AnyPgColumn;
  org: AnyPgColumn;
  bucket: AnyPgColumn;
  createdAt: AnyPgColumn;
  /** Names the row in a 404: "Set not found". */
  noun: string;
  /** Names it in a 403, as assertBucketAllowed takes it: "The set". */
  what: string;
}

/**
 * One row by id: 404 outside the caller's organization, then 403 outside a restricted key's
 * bucket. `lock`: the row stays locked until the transaction ends, so the changes made to
 * what hangs off it (a set's items, a storyboard's clips) run one after another.
 */
export async function findOwned<Row extends { bucketId: string | null }>(db: Db, caller: Caller, owned: Owned, id: string, lock = false): Promise<Row> {
  const query = db
    .select()
    .from(owned.table)
    .where(and(eq(owned.id, id), eq(owned.org, caller.orgId)))
    .limit(1);
  const [row] = (lock ? await query.for("update") : await query) as Row[];
  if (!row) throw errors.notFound(owned.noun);
  assertBucketAllowed(caller, row.bucketId, owned.what);
  return row;
}

/**
 * A page of what the caller may see of a table, newest first, and how many rows that is in
 * all. `rows` is the select to page through (its columns and joins), in dynamic mode.
 */
export async function visiblePage<Q extends PgSelect>(db: Db, caller: Caller, owned: Owned, rows: Q, q: { limit: number; offset: number }): Promise<{ rows: Awaited<Q>; total: number }> {
  const where = visibleTo(caller, owned);
  const [found, [{ total } = { total: 0 }]] = await Promise.all([
    rows.where(where).orderBy(desc(owned.createdAt), desc(owned.id)).limit(q.limit).offset(q.offset),
    db.select({ total: count() }).from(owned.table).where(where),
  ]);
  return { rows: found as Awaited<Q>, total };
}

/** Deletes one row (what hangs off it goes by foreign-key cascade) once findOwned has locked it. */
export async function deleteOwned(db: Db, caller: Caller, owned: Owned, id: string): Promise<Deleted> {
  return db.transaction(async (tx) => {
    await findOwned(tx, caller, owned, id, true);
    await tx.delete(owned.table).where(and(eq(owned.id, id), eq(owned.org, caller.orgId)));
    return { id, deleted: true as const };
  });
}
