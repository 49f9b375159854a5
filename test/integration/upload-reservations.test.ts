import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { reserveSingleShot, type SingleShotRequest } from "../../domain/media/upload-reservations.ts";
import { liveUsage } from "../../domain/usage/counters.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * Single-shot reservations of one organization arriving while its statement is under way go
 * together in the next one (domain/media/upload-reservations.ts), and each still gets the
 * answer it would have got alone.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
}, 60_000);
afterAll(() => server.stop());

const db = () => server.services.deps.db;
const request = (bucketId: string, key: string, size: number): SingleShotRequest => ({
  bucketId,
  key,
  size,
  counts: size,
  slack: 64 * 1024 * 1024,
  contentType: "application/octet-stream",
  tags: ["t"],
  now: new Date(),
  lifetimeMs: 60_000,
});

async function reservations(orgId: string) {
  return rowsOf<{ key: string; bytes: number | string; tags: string[]; xid: string }>(
    await db().execute(sql`select key, bytes, tags, xmin::text as xid from upload_reservations where org_id = ${orgId} order by key`),
  ).map((r) => ({ key: r.key, bytes: Number(r.bytes), tags: r.tags, xid: r.xid }));
}

async function roomFor(org: TestOrg, bytes: number) {
  await db().execute(sql`update org_usage set allocated_storage = used_storage + reserved_storage + ${bytes} where org_id = ${org.orgId}`);
}

test("requests arriving while one is under way are reserved together, in one statement", async () => {
  const org = await newOrg(server);
  const bucket = await newBucket(org, "batched");
  const keys = Array.from({ length: 20 }, (_, i) => `k/${String(i).padStart(2, "0")}.bin`);
  const seen = await Promise.all(keys.map((key) => reserveSingleShot(db(), org.orgId, request(bucket.id, key, 100))));
  expect(seen.every((s) => s?.bucketName === bucket.name && s.etag === null && !s.unsure)).toBe(true);
  const rows = await reservations(org.orgId);
  expect(rows.map((r) => r.key)).toEqual(keys);
  expect(rows.every((r) => r.bytes === 100 && r.tags.join() === "t")).toBe(true);
  // The first went alone; the other nineteen waited for it and went together.
  expect(new Set(rows.map((r) => r.xid)).size).toBe(2);
  expect((await liveUsage(db(), org.orgId))!.reservedStorage).toBe(2000);
});

test("a batch the allocation refuses as a whole is answered one request at a time, in arrival order", async () => {
  const org = await newOrg(server);
  const bucket = await newBucket(org, "tight");
  await roomFor(org, 550);
  const keys = Array.from({ length: 10 }, (_, i) => `k/${i}.bin`);
  const seen = await Promise.all(keys.map((key) => reserveSingleShot(db(), org.orgId, request(bucket.id, key, 100))));
  // Room for five: the first alone, then four of the nine that went together (refused as a whole).
  expect(seen.map((s) => s !== null)).toEqual([true, true, true, true, true, false, false, false, false, false]);
  expect((await reservations(org.orgId)).map((r) => r.key)).toEqual(keys.slice(0, 5));
  expect((await liveUsage(db(), org.orgId))!.reservedStorage).toBe(500);
});

test("a request for another organization's bucket is refused alone; the rest of its batch is reserved", async () => {
  const org = await newOrg(server);
  const other = await newOrg(server);
  const mine = await newBucket(org, "mine");
  const theirs = await newBucket(other, "theirs");
  const targets = [mine.id, mine.id, theirs.id, mine.id];
  const seen = await Promise.all(targets.map((bucketId, i) => reserveSingleShot(db(), org.orgId, request(bucketId, `k/${i}.bin`, 10))));
  expect(seen.map((s) => s?.bucketName ?? null)).toEqual([mine.name, mine.name, null, mine.name]);
  expect((await reservations(org.orgId)).map((r) => r.key)).toEqual(["k/0.bin", "k/1.bin", "k/3.bin"]);
  expect(await reservations(other.orgId)).toEqual([]);
});

test("a key with an earlier unconfirmed reservation is reported unsure, as alone", async () => {
  const org = await newOrg(server);
  const bucket = await newBucket(org, "unsure");
  expect((await reserveSingleShot(db(), org.orgId, request(bucket.id, "same.bin", 1)))?.unsure).toBe(false);
  const [a, b] = await Promise.all([reserveSingleShot(db(), org.orgId, request(bucket.id, "same.bin", 1)), reserveSingleShot(db(), org.orgId, request(bucket.id, "other.bin", 1))]);
  expect([a?.unsure, b?.unsure]).toEqual([true, false]);
});
