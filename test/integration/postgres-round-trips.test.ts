import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server, type Socket, connect } from "node:net";
import { sql } from "drizzle-orm";
import { postgresOneRoundTrip, postgresTypesReadGuarded, rowsOf } from "../../db/client.ts";
import { testEnv } from "../support/env.ts";

/**
 * postgres.js as the service loads it (db/postgres-fix.ts) sends a statement it does not keep
 * prepared in one write, Parse to Sync, instead of waiting for PostgreSQL's parameter types
 * between Parse and Bind. A proxy between the driver and the server counts the driver's
 * writes; the values Drizzle hands the driver must arrive as they were sent without the
 * types the Describe used to give. PostgreSQL only (PGlite has no wire).
 */
// Loaded after db/client.ts, as the service loads them: a static import would load postgres.js before the patch is registered.
const { default: postgres } = await import("postgres");
const { drizzle } = await import("drizzle-orm/postgres-js");

let proxy: Server;
let writes = 0;
/** Set by a test: the next connection that reads the server's array types is reset then. */
let resetAtTypesRead = false;
const sockets: Socket[] = [];

beforeAll(async () => {
  if (!testEnv.databaseUrl) return;
  const target = new URL(testEnv.databaseUrl);
  proxy = createServer((client) => {
    const server = connect(Number(target.port || 5432), target.hostname);
    sockets.push(client, server);
    client.on("data", (chunk) => {
      writes++;
      if (resetAtTypesRead && chunk.includes("typarray")) {
        resetAtTypesRead = false;
        client.resetAndDestroy();
        server.destroy();
        return;
      }
      server.write(chunk);
    });
    server.on("data", (chunk) => client.write(chunk));
    client.on("close", () => server.destroy());
    server.on("close", () => client.destroy());
    client.on("error", () => {});
    server.on("error", () => {});
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
});

afterAll(() => {
  for (const s of sockets) s.destroy();
  proxy?.close();
});

const viaProxy = () => {
  const url = new URL(testEnv.databaseUrl!);
  url.hostname = "127.0.0.1";
  url.port = String((proxy.address() as { port: number }).port);
  return postgres(url.toString(), { max: 1, onnotice: () => {} });
};

describe.skipIf(!testEnv.databaseUrl)("postgres.js round trips", () => {
  test("the patch is applied to the postgres.js this service loads", () => {
    expect(postgresOneRoundTrip).toBe(true);
  });

  test("an unprepared statement with parameters is one write; a prepared one describes once per connection", async () => {
    const client = viaProxy();
    try {
      await client`select 1`; // connect and authenticate first
      const db = drizzle(client);
      let before = writes;
      for (let i = 0; i < 10; i++) await db.execute(sql`select ${i}::int + ${1}::int as n`);
      expect(writes - before).toBe(10);
      before = writes;
      for (let i = 0; i < 10; i++) await client.unsafe("select $1::int as n", [i], { prepare: true });
      expect(writes - before).toBe(11);
    } finally {
      await client.end({ timeout: 5 });
    }
  });

  test("a connection reset while it reads the array types fails the waiting query, and nothing is left unhandled", async () => {
    expect(postgresTypesReadGuarded).toBe(true);
    const client = viaProxy();
    try {
      resetAtTypesRead = true;
      // Unpatched, the types read's own rejection is unhandled too, and fails this test.
      const first = await client`select 1 as one`.then(
        () => null,
        (err: NodeJS.ErrnoException) => err.code,
      );
      expect(first).toBe("ECONNRESET");
      await Bun.sleep(50);
      expect([...(await client`select 1 as one`)]).toEqual([{ one: 1 }]);
    } finally {
      resetAtTypesRead = false;
      await client.end({ timeout: 5 });
    }
  });

  test("values arrive as Drizzle sent them, without the types a Describe would give", async () => {
    const client = viaProxy();
    try {
      const db = drizzle(client);
      const at = new Date("2026-11-27T21:39:42.156Z");
      const [row] = rowsOf<Record<string, unknown>>(
        await db.execute(sql`select
          ${"a 'quoted' text"}::text as text, ${42}::int as int, ${2 ** 40}::bigint as big, ${1.5}::float8 as float,
          ${true}::boolean as yes, ${false}::boolean as no, ${null}::text as nothing,
          ${at.toISOString()}::timestamptz = '2026-11-27T21:39:42.156Z'::timestamptz as same_time,
          ${JSON.stringify({ k: ["v", 1] })}::jsonb as doc, ${"{a,b}"}::text[] as list,
          ${crypto.randomUUID()}::uuid is not null as uuid, ${Buffer.from([0, 1, 255])}::bytea as bytes`),
      );
      expect(row).toMatchObject({ text: "a 'quoted' text", int: 42, float: 1.5, yes: true, no: false, nothing: null, same_time: true, doc: { k: ["v", 1] }, list: ["a", "b"], uuid: true });
      expect(String(row!.big)).toBe(String(2 ** 40));
      expect([...(row!.bytes as Uint8Array)]).toEqual([0, 1, 255]);
    } finally {
      await client.end({ timeout: 5 });
    }
  });
});

describe.skipIf(!testEnv.databaseUrl)("an instance's connections (docs/scaling.md)", () => {
  test("a pool of 10 PostgreSQL connections, and 5 more for searches", async () => {
    const { startServer } = await import("../support/server.ts");
    const server = await startServer();
    try {
      type Pooled = { $client: { options: { max: number } } };
      const main = (server.services.deps.db as unknown as Pooled).$client.options.max;
      const searches = (server.services.deps.search as unknown as { db: Pooled }).db.$client.options.max;
      expect({ main, searches }).toEqual({ main: 10, searches: 5 });
    } finally {
      await server.stop();
    }
  });
});
