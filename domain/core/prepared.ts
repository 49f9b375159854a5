import { type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Db } from "../../db/client.ts";

/**
 * Drizzle builds a query's SQL text anew on every call, and on the hottest reads that
 * building was the largest part of the route's own CPU (bench/notes/2026-11-22-profiles-and-fixes.md, get: a quarter of
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
 * reservation that planning was two thirds of the statement's time (bench/notes/2026-11-27-fifth-sitting.md).
 * A statement whose best plan depends on its values does not belong here: PostgreSQL may keep
 * a generic plan that guessed them. Drizzle has no public call for this, so it goes through
 * the session method its `.prepare(name)` uses, on both drivers.
 */
export function preparedSql(db: Db, name: string, build: () => SQL): RawPrepared {
  return prepared(db, name, (d) => serverPrepared(d, build(), name));
}

/** Drizzle's own path for `.prepare(name)`: the driver keeps the statement prepared on each connection. */
function serverPrepared(db: Db, query: SQL, name: string): RawPrepared {
  const internal = db as unknown as { session: { prepareQuery(q: unknown, fields: undefined, name: string | undefined, arrayMode: boolean): RawPrepared }; dialect: { sqlToQuery(s: SQL): unknown } };
  return internal.session.prepareQuery(internal.dialect.sqlToQuery(query), undefined, name, false);
}

/**
 * Runs `query` as a statement the connection keeps prepared, under a name the driver derives
 * from its text (postgres.js keeps one per distinct text per connection), with the values it
 * was built with. For hand-written statements whose text has a few shapes, built per call:
 * every distinct text is a statement each pooled connection keeps, so the caller bounds how
 * many texts reach here. PGlite runs it as any other query.
 */
export function executeKept(db: Db, query: SQL): Promise<unknown> {
  return serverPrepared(db, query, "kept").execute({});
}
