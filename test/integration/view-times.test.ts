import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { isoTimeOf } from "../../domain/media/view-rows.ts";
import { startServer, type TestServer } from "../support/server.ts";

/**
 * A media view's times are written by the database (domain/media/view-rows.ts); each must be
 * what Date's toISOString writes for the same instant, to the character: UTC, milliseconds with
 * the microseconds cut, whatever the session's time zone.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

test("a view's time is the instant as toISOString writes it, in any session time zone", async () => {
  // Microseconds since 1970 (as text: the last two, 9999-12-31T23:59:59.999999 and 0001-01-01, are past 2^53).
  const micros = [
    ...[0, 1, 999, 1_000, 999_999, -1, -999, -1_000_001, 1_764_451_693_123_456, 1_764_451_693_999_999].map(String),
    ...Array.from({ length: 2_000 }, () => String(Math.floor((Math.random() - 0.3) * 4e15))),
    "253402300799999999",
    "-62135596800000000",
  ];
  for (const zone of ["UTC", "America/St_Johns", "Asia/Kathmandu"]) {
    const rows = await server.services.deps.db.transaction(async (tx) => {
      await tx.execute(sql.raw(`set local time zone '${zone}'`));
      return rowsOf<{ us: string; iso: string }>(
        await tx.execute(sql`select u::text as us, ${isoTimeOf(sql`to_timestamp(0) + (u / 1000000) * interval '1 second' + (u % 1000000) * interval '1 microsecond'`)} as iso from unnest(${`{${micros.join(",")}}`}::bigint[]) u`),
      );
    });
    expect(rows.length).toBe(micros.length);
    for (const r of rows) expect([zone, r.us, r.iso]).toEqual([zone, r.us, new Date(Number((BigInt(r.us) - (BigInt(r.us) % 1000n + 1000n) % 1000n) / 1000n)).toISOString()]);
  }
});
