import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { type Db, rowsOf } from "../../db/client.ts";
import { EgressLedger, type EgressEvent } from "../../domain/usage/egress-ledger.ts";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";

/**
 * Download and stream URLs count their egress in memory and write it in batches
 * (domain/usage/egress-ledger.ts): one statement per interval instead of one row per URL.
 * Reads on the same instance write what is waiting first, so their totals stay exact.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
}, 60_000);
afterAll(() => server.stop());

const db = () => server.services.deps.db;
const log = () => server.services.deps.log;
const egressRows = async (orgId: string) =>
  rowsOf<{ type: string; bytes: number | string; rollup_pending: boolean }>(
    await db().execute(sql`select type, bytes, rollup_pending from usage_events where org_id = ${orgId} and type in ('download', 'stream') order by seq`),
  ).map((r) => ({ type: r.type, bytes: Number(r.bytes), pending: r.rollup_pending }));
const eventFor = (obj: { id: string; bucketId: string; key: string }, bytes: number, kind: EgressEvent["kind"] = "download"): EgressEvent => ({
  kind,
  at: new Date(),
  objectId: obj.id,
  bucketId: obj.bucketId,
  key: obj.key,
  bytes,
});

async function orgWithObject(): Promise<{ org: TestOrg; obj: { id: string; bucketId: string; key: string } }> {
  const org = await newOrg(server);
  const bucket = await newBucket(org, "egress");
  const obj = await upload(org.admin, bucket.id, "film.bin", bytesOf(300), { size: 300 });
  return { org, obj: { id: obj.id, bucketId: bucket.id, key: "film.bin" } };
}

test("events wait in memory until the interval or a flush, then are written together, flagged for the rollup", async () => {
  const { org, obj } = await orgWithObject();
  const ledger = new EgressLedger(db(), log(), 60_000);
  ledger.add(org.orgId, eventFor(obj, 300));
  ledger.add(org.orgId, eventFor(obj, 300, "stream"));
  ledger.add(org.orgId, eventFor(obj, 300));
  expect(ledger.waiting).toBe(3);
  expect(await egressRows(org.orgId)).toEqual([]);
  await ledger.flush();
  expect(ledger.waiting).toBe(0);
  expect(await egressRows(org.orgId)).toEqual([
    { type: "download", bytes: 300, pending: true },
    { type: "stream", bytes: 300, pending: true },
    { type: "download", bytes: 300, pending: true },
  ]);
});

test("renders of one object wait as one event with their bytes summed; downloads stay one event each", async () => {
  const { org, obj } = await orgWithObject();
  const other = { ...obj, id: crypto.randomUUID() };
  const ledger = new EgressLedger(db(), log(), 60_000);
  for (const bytes of [10, 20, 30]) ledger.add(org.orgId, eventFor(obj, bytes, "render"));
  ledger.add(org.orgId, eventFor(other, 5, "render"));
  ledger.add(org.orgId, eventFor(obj, 300));
  ledger.add(org.orgId, eventFor(obj, 300));
  expect(ledger.waiting).toBe(4);
  await ledger.flush();
  // The next batch starts its own sum.
  ledger.add(org.orgId, eventFor(obj, 7, "render"));
  await ledger.flush();
  const rows = rowsOf<{ type: string; object_id: string; bytes: number | string }>(
    await db().execute(sql`select type, object_id, bytes from usage_events where org_id = ${org.orgId} and type in ('download', 'render') order by seq`),
  ).map((r) => `${r.type} ${r.object_id === obj.id ? "obj" : "other"} ${Number(r.bytes)}`);
  // One statement writes a batch: the order of its rows is not kept.
  expect(rows.sort()).toEqual(["download obj 300", "download obj 300", "render obj 60", "render obj 7", "render other 5"]);
});

test("a full batch is written without waiting for the interval", async () => {
  const { org, obj } = await orgWithObject();
  const ledger = new EgressLedger(db(), log(), 60_000, 2);
  ledger.add(org.orgId, eventFor(obj, 1));
  ledger.add(org.orgId, eventFor(obj, 2));
  await eventually(async () => ((await egressRows(org.orgId)).length === 2 ? true : undefined), { what: "the batch written" });
});

test("events of an organization deleted meanwhile are dropped, and the rest of the batch is written", async () => {
  const kept = await orgWithObject();
  const gone = await orgWithObject();
  const ledger = new EgressLedger(db(), log(), 60_000);
  ledger.add(kept.org.orgId, eventFor(kept.obj, 300));
  ledger.add(gone.org.orgId, eventFor(gone.obj, 300));
  await db().execute(sql`delete from organizations where id = ${gone.org.orgId}`);
  await ledger.flush();
  expect(ledger.waiting).toBe(0);
  expect((await egressRows(kept.org.orgId)).length).toBe(1);
  expect((await egressRows(gone.org.orgId)).length).toBe(0);
});

test("a write the database does not take keeps the events for the next one", async () => {
  // A database that is not there: nothing listens on port 1.
  const client = postgres("postgres://postgres@127.0.0.1:1/none", { max: 1, connect_timeout: 1, onnotice: () => {} });
  const ledger = new EgressLedger(drizzle(client) as unknown as Db, log(), 60_000);
  const obj = { id: crypto.randomUUID(), bucketId: crypto.randomUUID(), key: "k" };
  ledger.add(crypto.randomUUID(), eventFor(obj, 1));
  ledger.add(crypto.randomUUID(), eventFor(obj, 2));
  await ledger.flush();
  expect(ledger.waiting).toBe(2);
  await client.end({ timeout: 1 });
});

test("a usage read right after a download URL counts it: the instance writes what waits before reading", async () => {
  const { org, obj } = await orgWithObject();
  expect((await org.admin.post("/api/presign/download", { objectId: obj.id })).status).toBe(200);
  expect((await org.admin.get(`/api/media/${obj.id}/stream`)).status).toBeLessThan(400);
  const usage = (await org.admin.get("/api/usage")).body;
  expect(usage.egressThisMonth).toBe(600);
  expect((await org.admin.get("/api/usage/history?days=1")).body.data.at(-1).egressBytes).toBe(600);
  const events = (await org.admin.get("/api/usage/events?days=1")).body.data.filter((e: { type: string }) => e.type === "download" || e.type === "stream");
  expect(events.length).toBe(2);
});

// With PostgreSQL the servers of a run share one database, so another server can look after this one stops.
test.skipIf(testEnv.mode !== "services")("a clean shutdown writes the waiting batch", async () => {
  const other = await startServer();
  const org = await newOrg(other);
  const bucket = await newBucket(org, "egress");
  const obj = await upload(org.admin, bucket.id, "last.bin", bytesOf(300), { size: 300 });
  expect((await org.admin.post("/api/presign/download", { objectId: obj.id })).status).toBe(200);
  expect(other.services.deps.egress!.waiting).toBe(1);
  await other.stop();
  expect((await egressRows(org.orgId)).length).toBe(1);
});
