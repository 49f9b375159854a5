import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { testEnv } from "../support/env.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * DB_STATEMENT_TIMEOUT_MS and SEARCH_STATEMENT_TIMEOUT_MS (2026 attack run): a statement that runs,
 * or waits, past its deadline frees its connection and answers 503 `unavailable` with the
 * envelope, never 500 and never a hang. A lock held by another connection stands in for a slow
 * statement: statement_timeout counts the wait. PostgreSQL only: PGlite has no timers.
 */
const onPostgres = testEnv.mode === "services" && !!testEnv.databaseUrl;
let server: TestServer;
let org: TestOrg;
let sql: postgres.Sql;

beforeAll(async () => {
  if (!onPostgres) return;
  server = await startServer({ env: { DB_STATEMENT_TIMEOUT_MS: "800", SEARCH_STATEMENT_TIMEOUT_MS: "200" } });
  org = await newOrg(server);
  sql = postgres(testEnv.databaseUrl!, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  if (!onPostgres) return;
  await sql.end({ timeout: 1 });
  await server.stop();
});

/** Runs `during` while another connection holds `table` locked; gives the lock back after. */
async function whileLocked<T>(table: string, during: () => Promise<T>): Promise<T> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const holder = sql.begin(async (tx) => {
    await tx.unsafe(`lock table ${table} in access exclusive mode`);
    locked();
    await released;
  });
  await isLocked;
  try {
    return await during();
  } finally {
    release();
    await holder;
  }
}

describe.skipIf(!onPostgres)("statement timeouts on PostgreSQL", () => {
  test("a request whose statement waits past DB_STATEMENT_TIMEOUT_MS answers 503 unavailable promptly, then recovers", async () => {
    expect((await org.admin.get("/api/buckets")).status).toBe(200);
    const started = Date.now();
    const res = await whileLocked("buckets", () => org.admin.get("/api/buckets"));
    const ms = Date.now() - started;
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("unavailable");
    expect(res.body.error.requestId).toBe(res.headers.get("x-request-id"));
    expect(res.body.error.message).not.toMatch(/statement|cancel|SQL/i);
    expect(ms).toBeLessThan(4000);
    expect((await org.admin.get("/api/buckets")).status).toBe(200);
  });

  test("a search gets the tighter SEARCH_STATEMENT_TIMEOUT_MS", async () => {
    expect((await org.admin.get("/api/search?q=anything")).status).toBe(200);
    const started = Date.now();
    const res = await whileLocked("media_search", () => org.admin.get("/api/search?q=anything"));
    const ms = Date.now() - started;
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("unavailable");
    // Well under the pool's 800 ms: the search's own deadline stopped it.
    expect(ms).toBeLessThan(700);
    expect((await org.admin.get("/api/search?q=anything")).status).toBe(200);
  });

  test("the defaults: 5 s for every statement, 2 s for a search", async () => {
    const { loadConfig } = await import("../../app/config.ts");
    const c = loadConfig({});
    expect([c.statementTimeoutMs, c.searchStatementTimeoutMs]).toEqual([5000, 2000]);
  });
});
