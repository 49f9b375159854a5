import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { openDatabase, rowsOf } from "../../db/client.ts";
import { organizations } from "../../db/schema/index.ts";
import { seedDataDir } from "../support/pglite-template.ts";

/**
 * The embedded database is created with Drizzle's parsers instead of being handed them with
 * every query (db/pglite-parsers.ts): the answers must be what Drizzle would have made of them.
 */
test("dates come back as Drizzle maps them: Date objects for typed columns, PostgreSQL's text in raw SQL", async () => {
  // A copy of the run's migrated template: a new database would spend seconds on its migrations.
  const dir = mkdtempSync(join(tmpdir(), "media-parsers-"));
  await seedDataDir(dir);
  const database = await openDatabase({ dataDir: join(dir, "db") });
  try {
    const id = crypto.randomUUID();
    const at = new Date("2026-01-02T03:04:05.678Z");
    await database.db.insert(organizations).values({ id, name: "Parsers", createdAt: at });
    const [row] = await database.db.select({ createdAt: organizations.createdAt }).from(organizations).where(eq(organizations.id, id));
    expect(row!.createdAt).toBeInstanceOf(Date);
    expect(row!.createdAt.toISOString()).toBe(at.toISOString());
    const [raw] = rowsOf<{ t: unknown; d: unknown; n: unknown }>(await database.db.execute(sql`select ${at.toISOString()}::timestamptz as t, '2026-01-02'::date as d, 12.5::numeric as n`));
    expect(raw).toEqual({ t: "2026-01-02 03:04:05.678+00", d: "2026-01-02", n: "12.5" });
    // Inside a transaction too.
    const inTx = await database.db.transaction(async (tx) => rowsOf<{ t: unknown }>(await tx.execute(sql`select ${at.toISOString()}::timestamptz as t`))[0]);
    expect(inTx).toEqual({ t: "2026-01-02 03:04:05.678+00" });
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
