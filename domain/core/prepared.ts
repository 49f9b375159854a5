import { type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Db } from "../../db/client.ts";

/**
 * Drizzle builds a query's SQL text anew on every call, and on the hottest reads that
 * building was the largest part of the route's own CPU (bench/RESULTS.md, get: a quarter of
 * the server's samples were in drizzle-orm). A prepared query is built once per database
 * handle and name; transactions are handles of their own, so they build it again (and let
 * it go with them).
 */
const built = new WeakMap<object, Map<string, unknown>>();

export function prepared<T>(db: Db, name: string, build: (db: Db) => T): T {
  let byName = built.get(db);
  if (!byName) built.set(db, (byName = new Map()));
  let query = byName.get(name) as T | undefined;
  if (query === undefined) byName.set(name, (query = build(db)));
  return query;
}

/**
 * `column` is one of the ids in the placeholder `ids` (comma-separated): one parameter for
 * any number of ids, so a prepared query fits every call; the same on postgres.js and PGlite.
 */
export function anyId(column: AnyPgColumn): SQL {
  return sql`${column} = any(string_to_array(${sql.placeholder("ids")}, ',')::uuid[])`;
}

interface RawPrepared {
  execute(values: Record<string, unknown>): Promise<unknown>;
}

/**
 * A hand-written statement (a CTE the query builder cannot express), built once per database
 * handle and name like the builder's prepared queries: its values are `sql.placeholder`s.
 * It is also prepared on the server under `name`: `db.execute` sends its text unnamed, so
 * PostgreSQL parses and plans it on every call, and for the upload URL's one-statement
 * reservation that planning was two thirds of the statement's time (bench/RESULTS.md, peer).
 * A statement whose best plan depends on its values does not belong here: PostgreSQL may keep
 * a generic plan that guessed them. Drizzle has no public call for this, so it goes through
 * the session method its `.prepare(name)` uses, on both drivers.
 */
export function preparedSql(db: Db, name: string, build: () => SQL): RawPrepared {
  return prepared(db, name, (d) => {
    const internal = d as unknown as { session: { prepareQuery(q: unknown, fields: undefined, name: string | undefined, arrayMode: boolean): RawPrepared }; dialect: { sqlToQuery(s: SQL): unknown } };
    return internal.session.prepareQuery(internal.dialect.sqlToQuery(build()), undefined, name, false);
  });
}
