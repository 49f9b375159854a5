import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import * as schema from "./schema/index.ts";

/** The same Drizzle API over postgres.js and PGlite; domain code never knows which. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: "postgres" | "pglite";
  close(): Promise<void>;
}

const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

// Any constant works; it only has to be the same for every instance of the service.
const MIGRATION_LOCK = 727_001;

/**
 * `url` set: PostgreSQL through postgres.js. Unset: PGlite in `dataDir`
 * ("memory://" for a throwaway one). Migrations are applied before returning.
 */
export async function openDatabase(opts: { url?: string; dataDir: string; poolSize?: number }): Promise<Database> {
  if (opts.url) {
    const client = postgres(opts.url, { max: opts.poolSize ?? 10, onnotice: () => {} });
    const db = drizzlePostgres(client, { schema }) as unknown as Db;
    // Several instances may start at once; a session advisory lock on a one-connection
    // client makes them migrate one at a time.
    const migrator = postgres(opts.url, { max: 1, onnotice: () => {} });
    try {
      await migrator`select pg_advisory_lock(${MIGRATION_LOCK})`;
      await migratePostgres(drizzlePostgres(migrator, { schema }), { migrationsFolder });
    } finally {
      await migrator.end({ timeout: 5 });
    }
    return { db, kind: "postgres", close: () => client.end({ timeout: 5 }) };
  }
  if (!opts.dataDir.startsWith("memory://")) mkdirSync(opts.dataDir, { recursive: true });
  const client = await PGlite.create(opts.dataDir, { extensions: { pg_trgm } });
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder });
  return { db, kind: "pglite", close: () => client.close() };
}

/** `db.execute` answers an array on postgres.js and `{ rows }` on PGlite. */
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

export async function ping(db: Db): Promise<void> {
  await db.execute(sql`select 1`);
}
