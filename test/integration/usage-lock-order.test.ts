import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { addApiCalls, dayOf } from "../../domain/usage/counters.ts";
import { rollUpEgress } from "../../domain/usage/egress-rollup.ts";
import { EgressLedger } from "../../domain/usage/egress-ledger.ts";
import { testEnv } from "../support/env.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";

/**
 * The two writers of an organization's day and month rows, the API-call meter and the egress
 * rollup, lock them in the same order (day, then month). In opposite orders each could hold
 * one row while waiting for the other: PostgreSQL then aborts one after its deadlock timeout,
 * a second in which both hold the rows.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  // Only this test's writers touch the rows: the server's own meter and rollup stop here.
  await server.services.apiCalls.stop();
  await server.services.rollup.stop();
}, 60_000);
afterAll(() => server.stop());

const db = () => server.services.deps.db;

async function lockWaiters(): Promise<number> {
  const [row] = rowsOf<{ n: number }>(
    await db().execute(sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`),
  );
  return row!.n;
}

async function untilWaiters(n: number): Promise<void> {
  for (let i = 0; (await lockWaiters()) < n; i++) {
    if (i > 200) throw new Error(`expected ${n} statements waiting on a lock`);
    await Bun.sleep(10);
  }
}

test.skipIf(testEnv.mode !== "services")("the meter and the egress rollup do not deadlock on an organization's day and month rows (PostgreSQL)", async () => {
  const org = await newOrg(server);
  const bucket = await newBucket(org, "locks");
  const obj = await upload(org.admin, bucket.id, "a.bin", bytesOf(100), { size: 100 });
  const day = dayOf(new Date());
  // Both rows exist, so each writer's upsert locks the row rather than inserting.
  await db().transaction((tx) => addApiCalls(tx, org.orgId, day, 1));
  const ledger = new EgressLedger(db(), server.services.deps.log, 60_000);
  ledger.add(org.orgId, { kind: "download", at: new Date(), objectId: obj.id, bucketId: bucket.id, key: "a.bin", bytes: 100 });
  await ledger.flush();

  // A third transaction holds the day row, so both writers queue on it: the rollup first.
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let holding!: () => void;
  const held = new Promise<void>((r) => (holding = r));
  const holder = db().transaction(async (tx) => {
    await tx.execute(sql`select 1 from usage_daily where org_id = ${org.orgId} and day = ${day}::date for update`);
    holding();
    await released;
  });
  await held;
  const rollup = rollUpEgress(db());
  await untilWaiters(1);
  const meter = db().transaction((tx) => addApiCalls(tx, org.orgId, day, 5));
  await untilWaiters(2);
  release();
  await holder;

  const [folded, metered] = await Promise.allSettled([rollup, meter]);
  expect(folded).toEqual({ status: "fulfilled", value: 1 });
  expect(metered.status).toBe("fulfilled");
  const [row] = rowsOf<{ calls: number | string; egress: number | string }>(
    await db().execute(sql`select api_calls as calls, egress_bytes as egress from usage_monthly where org_id = ${org.orgId}`),
  );
  expect({ calls: Number(row!.calls), egress: Number(row!.egress) }).toEqual({ calls: 6, egress: 100 });
});
