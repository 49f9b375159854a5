/**
 * `npm run db:migrate`: applies db/migrations to DATABASE_URL, or to the embedded database in
 * DATA_DIR, then exits. Every start does the same (under a lock, so instances take turns);
 * running it first lets a deployment migrate once before it starts new instances.
 */
import { sql } from "drizzle-orm";
import { openDatabase, rowsOf } from "../db/client.ts";
import { databaseLocation, loadConfig } from "./config.ts";
import { createLogger } from "./log.ts";

const config = loadConfig();
const log = createLogger(config.logLevel);
const database = await openDatabase({ ...databaseLocation(config), poolSize: 1 });
try {
  // Drizzle's migrators (postgres.js and PGlite alike) record each applied file here.
  const [row] = rowsOf<{ n: number }>(await database.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`));
  log.info("database migrated", { database: database.kind === "postgres" ? "PostgreSQL (DATABASE_URL)" : `embedded (${databaseLocation(config).dataDir})`, applied: row?.n ?? 0 });
} finally {
  await database.close();
}
