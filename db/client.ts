import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { btree_gin } from "@electric-sql/pglite/contrib/btree_gin";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { inLane, PgliteLanes } from "./pglite-lanes.ts";
import { inOneCall, keepNamedStatements } from "./pglite-one-call.ts";
import { DRIZZLE_PARSERS, withParsersOnce } from "./pglite-parsers.ts";
import { instrumentPglite, instrumentPostgresJs, type PoolState, SingleConnectionGauge, type SqlInstrument } from "./instrument.ts";
import { postgresFixApplied, postgresOneRoundTrip, postgresTypesReadGuarded } from "./postgres-fix.ts";
import * as schema from "./schema/index.ts";
import { Unreachable } from "./unreachable.ts";

// Loaded only after postgres-fix.ts has registered its patch: a static import would load
// postgres.js before any code of this module runs.
const { default: postgres } = await import("postgres");
const { drizzle: drizzlePostgres } = await import("drizzle-orm/postgres-js");
const { migrate: migratePostgres } = await import("drizzle-orm/postgres-js/migrator");

export { postgresFixApplied, postgresOneRoundTrip, postgresTypesReadGuarded };

/** The same Drizzle API over postgres.js and PGlite; domain code never knows which. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: "postgres" | "pglite";
  /** PGlite only: the same database for searches, whose statements give way to every other (db/pglite-lanes.ts). */
  background?: Db;
  /** Connections in use, idle and waited for, now (null when the driver does not tell). */
  pool(): PoolState | null;
  close(): Promise<void>;
}

const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

// Any constant works; it only has to be the same for every instance of the service.
const MIGRATION_LOCK = 727_001;

/**
 * postgres.js waits `3^n / 100` s (up to 20 s) before reconnecting after the n-th failed
 * connection of the whole pool, and a query handed to a connection in that wait waits with
 * it: after a restart, requests hung for up to 20 s although PostgreSQL was back. A short,
 * capped backoff and a connect deadline make an outage a prompt 503 and its end a prompt
 * recovery (test/hardening/faults-postgres.test.ts).
 */
const FAIL_FAST = { connect_timeout: 5, backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1) };

/** Failures of reaching PostgreSQL at all, as opposed to a statement failing. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "28P01", // invalid_password
  "28000", // invalid_authorization_specification (pg_hba)
  "3D000", // invalid_catalog_name: the database does not exist
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
]);

/** `err` as an Unreachable naming the server (never the URL's credentials), or null when it is not a connection failure. */
function connectionFailure(err: unknown, url: string): Unreachable | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !CONNECTION_CODES.has(code)) return null;
  let where = "PostgreSQL";
  try {
    const u = new URL(url);
    where = `PostgreSQL at ${u.host}${u.pathname}`;
  } catch {
    // an unparsable URL is named by the variable alone
  }
  return new Unreachable(where, "DATABASE_URL", err);
}

/**
 * `url` set: PostgreSQL through postgres.js. Unset: PGlite in `dataDir`
 * ("memory://" for a throwaway one). Migrations are applied before returning.
 */
export async function openDatabase(opts: {
  url?: string;
  dataDir: string;
  poolSize?: number;
  instrument?: SqlInstrument;
  statementTimeoutMs?: number;
  /** Called once when another instance holds the migration lock, before waiting for it. */
  onMigrationWait?: () => void;
}): Promise<Database> {
  if (opts.url) {
    // statement_timeout as a startup parameter of every pooled connection: no statement of a
    // request (or a lock it waits for) can hold a connection longer (2026 attack run: a slow search
    // batch took every connection and another organization's list waited 13 s). A statement it
    // stops fails with 57014, answered 503 (tools/failure.ts). Migrations use their own
    // connection, without it. PGlite has no timers to enforce one; its guard is the query
    // complexity limits and the per-organization concurrency caps.
    const timeout = opts.statementTimeoutMs ? { connection: { statement_timeout: opts.statementTimeoutMs } } : {};
    const client = postgres(opts.url, { max: opts.poolSize ?? 10, onnotice: () => {}, ...FAIL_FAST, ...timeout });
    const db = drizzlePostgres(opts.instrument ? instrumentPostgresJs(client, opts.instrument) : client, { schema }) as unknown as Db;
    // Several instances may start at once; a session advisory lock on a one-connection
    // client makes them migrate one at a time.
    const migrator = postgres(opts.url, { max: 1, onnotice: () => {}, connect_timeout: FAIL_FAST.connect_timeout });
    try {
      // The first statement, so a database that cannot be reached is said in one line (app/start-failure.ts).
      const [first] = await migrator<{ got: boolean }[]>`select pg_try_advisory_lock(${MIGRATION_LOCK}) as got`.catch((err: unknown) => {
        throw connectionFailure(err, opts.url!) ?? err;
      });
      if (!first?.got) {
        // Another instance is migrating: say so, then wait for it (the caller answers /healthz meanwhile).
        opts.onMigrationWait?.();
        await migrator`select pg_advisory_lock(${MIGRATION_LOCK})`;
      }
      await migratePostgres(drizzlePostgres(migrator, { schema }), { migrationsFolder });
    } catch (err) {
      await client.end({ timeout: 1 }).catch(() => {});
      throw err;
    } finally {
      await migrator.end({ timeout: 5 });
    }
    const pool = () => (client as unknown as { poolState?: PoolState }).poolState ?? null;
    return { db, kind: "postgres", pool, close: () => client.end({ timeout: 5 }) };
  }
  if (!opts.dataDir.startsWith("memory://")) mkdirSync(opts.dataDir, { recursive: true });
  const client = await PGlite.create(opts.dataDir, { extensions: { pg_trgm, btree_gin }, parsers: DRIZZLE_PARSERS });
  const gauge = new SingleConnectionGauge();
  const lanes = new PgliteLanes();
  keepNamedStatements();
  const oneCall = inOneCall(client);
  const handle = (lane: "fore" | "back") => drizzlePglite(instrumentPglite(inLane(withParsersOnce(oneCall), lanes, lane), opts.instrument ?? ((_k, _s, run) => run()), gauge), { schema }) as unknown as Db;
  await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder });
  return { db: handle("fore"), background: handle("back"), kind: "pglite", pool: () => gauge.state(), close: () => client.close() };
}

/**
 * A second, small pool on an already migrated PostgreSQL database, for one kind of statement
 * with its own deadline (full-text search): the deadline is a startup parameter of its
 * connections, so no statement needs a transaction to set it, and the kind cannot hold more
 * than `poolSize` of the server's connections whatever else is running.
 */
export function openPool(opts: { url: string; poolSize: number; statementTimeoutMs: number; instrument?: SqlInstrument }): { db: Db; close(): Promise<void> } {
  const client = postgres(opts.url, { max: opts.poolSize, onnotice: () => {}, ...FAIL_FAST, connection: { statement_timeout: opts.statementTimeoutMs } });
  const db = drizzlePostgres(opts.instrument ? instrumentPostgresJs(client, opts.instrument) : client, { schema }) as unknown as Db;
  return { db, close: () => client.end({ timeout: 5 }) };
}

/** `db.execute` answers an array on postgres.js and `{ rows }` on PGlite. */
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

export async function ping(db: Db): Promise<void> {
  await db.execute(sql`select 1`);
}
