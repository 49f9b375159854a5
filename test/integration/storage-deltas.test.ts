import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { orgUsage } from "../../db/schema/index.ts";
import { reserveStorage } from "../../domain/usage/counters.ts";
import { appendStorageDelta, foldStorage } from "../../domain/usage/storage-deltas.ts";
import { eventually } from "../support/eventually.ts";
import { testEnv } from "../support/env.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";
import { startReceiver } from "../support/webhook-receiver.ts";
import { eq } from "drizzle-orm";

/**
 * Confirms and deletes append their change of the storage counters (storage_deltas) instead
 * of updating the organization's usage row and its bucket's count, which every other change
 * of the organization would wait for until commit. The rollup folds them in; every read adds
 * what is pending, so the numbers are exact before, during and after the fold.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
}, 60_000);
afterAll(() => server.stop());

const db = () => server.services.deps.db;
const pendingRows = async (orgId: string) =>
  Number(rowsOf<{ n: number | string }>(await db().execute(sql`select count(*) as n from storage_deltas where org_id = ${orgId}`))[0]!.n);
const summary = async (org: TestOrg, bucketId: string) => {
  const usage = (await org.admin.get("/api/usage")).body;
  const list = (await org.admin.get(`/api/media?bucketId=${bucketId}&limit=1`)).body;
  const all = (await org.admin.get("/api/media?limit=1")).body;
  const history = (await org.admin.get("/api/usage/history?days=1")).body.data.at(-1);
  return { used: usage.usedStorage, reserved: usage.reservedStorage, objects: usage.objectCount, bucketTotal: list.total, orgTotal: all.total, historyUsed: history.usedStorage, historyObjects: history.objectCount };
};

/** Presign with a declared size (the upload then confirms without taking the usage row), PUT, and return the confirm to run. */
async function presigned(org: TestOrg, bucketId: string, key: string, bytes: Uint8Array<ArrayBuffer>) {
  const p = await org.admin.post("/api/presign/upload", { bucketId, key, size: bytes.length });
  expect(p.status).toBe(200);
  expect((await fetch(p.body.url, { method: "PUT", headers: p.body.headers, body: bytes })).status).toBe(200);
  return () => org.admin.post("/api/presign/confirm", { bucketId, key });
}

test("totals are exact while changes are pending and after they are folded; the fold leaves nothing behind", async () => {
  const org = await newOrg(server);
  const bucket = await newBucket(org, "d");
  const a = await upload(org.admin, bucket.id, "a.bin", bytesOf(300), { size: 300 });
  await upload(org.admin, bucket.id, "b.bin", bytesOf(200), { size: 200 });
  await upload(org.admin, bucket.id, "a.bin", bytesOf(350), { size: 350 }); // an overwrite
  const pending = await presigned(org, bucket.id, "c.bin", bytesOf(50));
  expect((await org.admin.delete(`/api/media/${a.id}`)).status).toBe(200);
  const expected = { used: 200, reserved: 50, objects: 1, bucketTotal: 1, orgTotal: 1, historyUsed: 200, historyObjects: 1 };
  expect(await pendingRows(org.orgId)).toBeGreaterThan(0);
  expect(await summary(org, bucket.id)).toEqual(expected);
  await server.services.rollup.flush();
  expect(await pendingRows(org.orgId)).toBe(0);
  expect(await summary(org, bucket.id)).toEqual(expected);
  const [row] = await db().select().from(orgUsage).where(eq(orgUsage.orgId, org.orgId));
  expect(row).toMatchObject({ usedStorage: 200, reservedStorage: 50, objectCount: 1 });
  expect((await pending()).status).toBe(200);
  expect(await summary(org, bucket.id)).toEqual({ used: 250, reserved: 0, objects: 2, bucketTotal: 2, orgTotal: 2, historyUsed: 250, historyObjects: 2 });
});

test("a quota check counts the pending changes: what a delete freed can be reserved before any fold", async () => {
  const org = await newOrg(server);
  const bucket = await newBucket(org, "q");
  await server.services.rollup.flush();
  await db().update(orgUsage).set({ allocatedStorage: 1000 }).where(eq(orgUsage.orgId, org.orgId));
  const big = await upload(org.admin, bucket.id, "big.bin", bytesOf(700), { size: 700 });
  expect((await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "more.bin", size: 400 })).status).toBe(403);
  expect((await org.admin.delete(`/api/media/${big.id}`)).status).toBe(200);
  expect(await pendingRows(org.orgId)).toBeGreaterThan(0);
  expect((await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "more.bin", size: 900 })).status).toBe(200);
  expect((await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "over.bin", size: 101 })).status).toBe(403);
});

test("changes that only together cross a threshold are announced by the fold, once", async () => {
  const org = await newOrg(server);
  const bucket = await newBucket(org, "t");
  // Events are recorded for organizations with an endpoint.
  const receiver = startReceiver();
  try {
    expect((await org.admin.post("/api/webhooks", { url: receiver.url })).status).toBe(201);
    await server.services.rollup.flush();
    await db().update(orgUsage).set({ allocatedStorage: 1000 }).where(eq(orgUsage.orgId, org.orgId));
    // Two confirms that each read the counters before the other's change (as concurrent ones
    // do): each appended its delta, neither crossed 80% on its own reading.
    const at = new Date();
    await appendStorageDelta(db(), org.orgId, { bucketId: bucket.id, bytes: 450, objects: 1 }, at);
    await appendStorageDelta(db(), org.orgId, { bucketId: bucket.id, bytes: 450, objects: 1 }, at);
    const announced = async () =>
      rowsOf<{ pct: number }>(await db().execute(sql`select (payload->'data'->>'thresholdPct')::int as pct from webhook_events where org_id = ${org.orgId} and type = 'usage.threshold'`));
    expect(await announced()).toEqual([]);
    await server.services.rollup.flush();
    expect((await announced()).map((r) => Number(r.pct))).toEqual([80]);
    await server.services.rollup.flush();
    expect(await announced()).toHaveLength(1);
  } finally {
    receiver.stop();
  }
});

// PGlite has one connection: a held transaction would block every other query, locked rows or not.
test.skipIf(testEnv.mode === "embedded")("a confirm and a delete do not wait for the organization's usage row, its bucket's or its day's", async () => {
  const org = await newOrg(server);
  const bucket = await newBucket(org, "locked");
  const first = await upload(org.admin, bucket.id, "first.bin", bytesOf(100), { size: 100 });
  await server.services.rollup.flush(); // the day's row exists now
  const confirm = await presigned(org, bucket.id, "second.bin", bytesOf(40));
  let answered = false;
  // Hold the counter rows as an UPDATE of them does (a fold, a billing change, a confirm
  // whose commit waits for its WAL flush) while confirming and deleting.
  await db().transaction(async (tx) => {
    await tx.execute(sql`select 1 from org_usage where org_id = ${org.orgId} for no key update`);
    await tx.execute(sql`select 1 from buckets where id = ${bucket.id} for no key update`);
    await tx.execute(sql`select 1 from usage_daily where org_id = ${org.orgId} for no key update`);
    expect((await confirm()).status).toBe(200);
    expect((await org.admin.delete(`/api/media/${first.id}`)).status).toBe(200);
    expect(await summary(org, bucket.id)).toMatchObject({ used: 40, reserved: 0, objects: 1, bucketTotal: 1 });
    answered = true;
  });
  expect(answered).toBe(true);
  await server.services.rollup.flush();
  expect(await summary(org, bucket.id)).toMatchObject({ used: 40, reserved: 0, objects: 1, bucketTotal: 1, historyUsed: 40 });
});

/**
 * Runs `check` while a fold of the organization's deltas holds its usage row: the fold has
 * written the row and deleted the deltas, the check waits for the lock, then the fold commits.
 */
async function whileFolding<T>(orgId: string, what: string, check: () => Promise<T>): Promise<T> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let folded!: () => void;
  const foldDone = new Promise<void>((r) => (folded = r));
  const folding = db().transaction(async (tx) => {
    await foldStorage(tx, orgId, new Date());
    folded();
    await held;
  });
  await foldDone;
  const checking = check();
  await eventually(async () => {
    const [w] = rowsOf<{ n: number | string }>(await db().execute(sql`select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%org_usage%'`));
    return Number(w!.n) > 0 ? true : undefined;
  }, { what: `${what} waiting for the fold` });
  release();
  await folding;
  return checking;
}

/**
 * A quota check is a conditional UPDATE of the usage row that adds the pending deltas. When it
 * waits for a fold holding that row, PostgreSQL rechecks its condition on the row the fold
 * wrote (the deltas now counted in it) while its own snapshot still sees the deltas the fold
 * deleted: counted twice, unless the check's statement starts after the row's lock is taken.
 */
test.skipIf(testEnv.mode === "embedded")("a quota check that waits for a fold counts the folded changes once, whichever their sign", async () => {
  for (const sign of [1, -1]) {
    const org = await newOrg(server);
    const bucket = await newBucket(org, "racing");
    const [u] = await db().select().from(orgUsage).where(eq(orgUsage.orgId, org.orgId));
    // Used storage at half the allocation, kept in the row, nothing reserved; a pending change of a quarter.
    const quarter = Math.floor(u!.allocatedStorage / 4);
    const reset = async () => {
      await appendStorageDelta(db(), org.orgId, { bucketId: bucket.id, bytes: sign * quarter, objects: 0 }, new Date());
      await db().update(orgUsage).set({ usedStorage: 2 * quarter, reservedStorage: 0 }).where(eq(orgUsage.orgId, org.orgId));
    };
    await reset();
    // What is left of the allocation once the change counts, once: the reservation of exactly
    // that fits; one byte more does not.
    const room = u!.allocatedStorage - (2 + sign) * quarter;
    for (const [bytes, fits] of [
      [room, true],
      [room + 1, false],
    ] as const) {
      const reserved = await whileFolding(org.orgId, "the reservation", () =>
        db()
          .transaction((tx) => reserveStorage(tx, org.orgId, bytes))
          .then(
            () => true,
            () => false,
          ),
      );
      expect({ sign, bytes: bytes - room, fits: reserved }).toEqual({ sign, bytes: bytes - room, fits });
      await reset();
      if (sign === 1) {
        // The same through an upload URL with a declared size (one statement, no lock taken
        // first): a refusal there is checked again after the lock.
        const presigned = await whileFolding(org.orgId, "the upload URL's reservation", () =>
          org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: `racing-${bytes}`, size: bytes }),
        );
        expect({ bytes: bytes - room, status: presigned.status }).toEqual({ bytes: bytes - room, status: fits ? 200 : 403 });
        await reset();
      }
    }
  }
});
