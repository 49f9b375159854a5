import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
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
    // A search not asked before: one asked again may be answered from its kept hits, which
    // need no statement on media_search (docs/search.md).
    const res = await whileLocked("media_search", () => org.admin.get("/api/search?q=something"));
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

describe.skipIf(!onPostgres)("the pools a server opens on PostgreSQL", () => {
  test("the search pool holds 5 connections and the main pool 10", async () => {
    // Deadlines, caps and budgets out of the way, so only the pools bound how many statements wait.
    const roomy = await startServer({
      env: { DB_STATEMENT_TIMEOUT_MS: "60000", SEARCH_STATEMENT_TIMEOUT_MS: "60000", ORG_MAX_SEARCHES: "50", ORG_CONCURRENCY_WAIT_MS: "60000", ORG_SEARCH_MS_PER_SECOND: "0" },
    });
    const watcher = postgres(testEnv.databaseUrl!, { max: 1, onnotice: () => {} });
    try {
      const o = await newOrg(roomy);
      expect((await o.admin.get("/api/search?q=anything")).status).toBe(200);
      expect((await o.admin.get("/api/buckets")).status).toBe(200);
      const waiting = async (table: string) =>
        Number((await watcher`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database() and query ilike ${`%${table}%`}`)[0]!.n);
      // Each pool lets only its size of statements wait on the lock; the rest wait for a connection.
      const filled = async (table: string, size: number, send: () => Promise<{ status: number }>) =>
        whileLocked(table, async () => {
          const answers = Promise.all(Array.from({ length: size + 4 }, send));
          await eventually(async () => ((await waiting(table)) >= size ? true : undefined), { timeoutMs: 60_000, what: `${size} statements waiting on ${table}` });
          await Bun.sleep(500);
          const seen = await waiting(table);
          return { seen, answers };
        });
      // Each a search not asked before (a repeat may be answered from kept hits).
      let asked = 0;
      const search = await filled("media_search", 5, () => o.admin.get(`/api/search?q=word${asked++}`));
      expect(search.seen).toBe(5);
      expect((await search.answers).map((r) => r.status)).toEqual(Array(9).fill(200));
      const main = await filled("buckets", 10, () => o.admin.get("/api/buckets"));
      expect(main.seen).toBe(10);
      expect((await main.answers).map((r) => r.status)).toEqual(Array(14).fill(200));
    } finally {
      await watcher.end({ timeout: 1 });
      await roomy.stop();
    }
  }, 120_000);
});
