/**
 * Unconfirmed bytes are bounded in size, not only in time (docs/conventions.md, "Quota"):
 * what an organization's uploads may still leave in storage (declared sizes; a URL without a
 * size, or a multipart part not yet stored, at UPLOAD_UNSIZED_MAX_BYTES) stays within its free
 * allocation plus one such URL. Past that, presigns are 403 quota_exceeded, saying how many
 * uploads are outstanding with how many bytes and what to do; a refused presign reserves
 * nothing. The embedded node refuses bytes past a URL's maximum; on a store that bounds
 * nothing (a second node reached through S3_ENDPOINT) the count is the same.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { openDatabase, rowsOf } from "../../db/client.ts";
import { orgUsage, uploadReservations } from "../../db/schema/index.ts";
import { objectPath } from "../../domain/media/storage-keys.ts";
import { partMaximum } from "../../domain/media/upload-parts.ts";
import { reserveSingleShot, type SingleShotRequest } from "../../domain/media/upload-reservations.ts";
import { presignUploadPart, sweepExpiredReservations } from "../../domain/media/uploads.ts";
import { MAX_LENGTH_PARAM } from "../../storage/local-s3/index.ts";
import { newBucket } from "../support/objects.ts";
import { type OtherStore, otherStore } from "../support/other-store.ts";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { type FaultProxy, faultProxy } from "../support/faults.ts";
import { newOrg, startServer, type TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";

const KB = 1000;
const MiB = 1024 * 1024;
/** UPLOAD_UNSIZED_MAX_BYTES of these servers: small, so that the bytes PUT stay small. */
const UNSIZED = MiB;

let store: OtherStore;
/** Between the second server and its store, so a test can make the store hang. */
let proxy: FaultProxy;
let embedded: TestServer;
let unbounded: TestServer;

beforeAll(async () => {
  store = await otherStore();
  proxy = faultProxy(store.port);
  const env = { UPLOAD_UNSIZED_MAX_BYTES: String(UNSIZED) };
  // A storage deadline far above the test's own: only the service's 2 s bounds can answer a hung store in time.
  const s3 = { ...store.env(proxy.url), S3_TIMEOUT_MS: "60000" };
  [embedded, unbounded] = await Promise.all([startServer({ env }), startServer({ env: { ...env, ...s3 } })]);
}, 120_000);
afterAll(async () => {
  await Promise.all([embedded?.stop(), unbounded?.stop()]);
  proxy?.stop();
  await store?.stop();
});

/** An organization with a bucket, optionally on a smaller allocation. */
async function orgOn(server: TestServer, allocated?: number) {
  const org = await newOrg(server);
  const bucket = await newBucket(org);
  const db = server.services.deps.db;
  if (allocated !== undefined) await db.update(orgUsage).set({ allocatedStorage: allocated }).where(eq(orgUsage.orgId, org.orgId));
  const presign = (key: string, size?: number) => org.admin.post("/api/presign/upload", { bucketId: bucket.id, key, ...(size === undefined ? {} : { size }) });
  const confirm = (key: string) => org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key });
  const multipart = (key: string, size?: number) => org.admin.post("/api/presign/create-multipart", { bucketId: bucket.id, key, ...(size === undefined ? {} : { size }) });
  const part = (key: string, uploadId: string, partNumber: number) => org.admin.post("/api/presign/upload-part", { bucketId: bucket.id, key, uploadId, partNumber });
  const abort = (key: string, uploadId: string) => org.admin.post("/api/presign/abort-multipart", { bucketId: bucket.id, key, uploadId });
  const reservations = async () => (await db.select({ key: uploadReservations.key }).from(uploadReservations).where(eq(uploadReservations.orgId, org.orgId))).length;
  const stored = (key: string) => server.services.deps.storage.head(objectPath(bucket.id, key));
  return { org, bucket, presign, confirm, multipart, part, abort, reservations, stored };
}

const put = (url: string, headers: Record<string, string>, body: Uint8Array<ArrayBuffer>) => fetch(url, { method: "PUT", headers, body });
const s3Code = async (res: Response) => /<Code>([^<]+)<\/Code>/.exec(await res.text())?.[1];

/** The refusal of an organization with too much unconfirmed: names the uploads and bytes outstanding, and what to do. */
function expectTooMuchUnconfirmed(res: { status: number; body: any }, uploads: number, bytes: number) {
  expect(res.status).toBe(403);
  expect(res.body.error.code).toBe("quota_exceeded");
  expect(res.body.error.message).toContain(`${uploads} upload${uploads === 1 ? " of this organization is" : "s of this organization are"} presigned and not confirmed, counting ${bytes} bytes`);
  expect(res.body.error.message).toContain("Confirm the uploads that are done, abort unfinished multipart uploads");
  expect(res.body.error.details).toMatchObject({ unconfirmedUploads: uploads, unconfirmedBytes: bytes, unsizedMaxBytes: UNSIZED });
}

describe("on the embedded storage node", () => {
  test("the finding: ten URLs without a size on a 100 KB allocation: one is given, bounded at the per-URL maximum; the others are refused", async () => {
    const o = await orgOn(embedded, 100 * KB);
    const first = await o.presign("u0.bin");
    expect(first.status).toBe(200);
    expect(new URL(first.body.url).searchParams.get(MAX_LENGTH_PARAM)).toBe(String(UNSIZED));
    for (let i = 1; i < 10; i++) expectTooMuchUnconfirmed(await o.presign(`u${i}.bin`), 1, UNSIZED);
    // A refused presign reserved nothing.
    expect(await o.reservations()).toBe(1);
    // 5 MiB PUT to the URL given: refused by the node, nothing stored.
    const refused = await put(first.body.url, first.body.headers, bytesOf(5 * MiB));
    expect(refused.status).toBe(400);
    expect(await s3Code(refused)).toBe("EntityTooLarge");
    expect(await o.stored("u0.bin")).toBeNull();
  });

  test("confirming an upload frees its room, and the next URL without a size is given", async () => {
    const o = await orgOn(embedded, 100 * KB);
    const first = await o.presign("a.bin");
    expectTooMuchUnconfirmed(await o.presign("b.bin"), 1, UNSIZED);
    expect((await put(first.body.url, first.body.headers, bytesOf(10 * KB))).status).toBe(200);
    expect((await o.confirm("a.bin")).status).toBe(200);
    expect(await o.reservations()).toBe(0);
    expect((await o.presign("b.bin")).status).toBe(200);
  });

  test("URLs presigned again for one key (a retry) count once: the key holds one object whichever is used", async () => {
    const o = await orgOn(embedded, 100 * KB);
    for (let i = 0; i < 3; i++) expect((await o.presign("retried.bin")).status).toBe(200);
    expectTooMuchUnconfirmed(await o.presign("other.bin"), 3, UNSIZED);
    expect(await o.reservations()).toBe(3);
  });

  test("the bound is the free allocation plus one URL without a size: declared sizes count, and are refused past it too", async () => {
    const o = await orgOn(embedded, 3 * MiB);
    for (let i = 0; i < 4; i++) expect((await o.presign(`u${i}.bin`)).status).toBe(200);
    expectTooMuchUnconfirmed(await o.presign("u4.bin"), 4, 4 * UNSIZED);
    // The allocation itself has room for a declared size (nothing is reserved), the unconfirmed bound has not.
    expectTooMuchUnconfirmed(await o.presign("sized.bin", 1000), 4, 4 * UNSIZED);
    expect(await o.reservations()).toBe(4);
  });

  test("URLs without a size asked for at once never pass the bound together", async () => {
    const o = await orgOn(embedded, 3 * MiB);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => o.presign(`c${i}.bin`)));
    expect(answers.filter((a) => a.status === 200).length).toBe(4);
    expect(answers.filter((a) => a.status === 403).length).toBe(16);
    expect(await o.reservations()).toBe(4);
  });

  test.if(testEnv.mode === "services")("nor from two instances of the service whose statements start at the same moment", async () => {
    // Two database handles stand for two instances; a third holds the organization's usage row
    // until both statements are waiting, so each started before the other committed.
    const o = await orgOn(embedded, 100 * KB);
    const [a, b] = await Promise.all([openDatabase({ url: testEnv.databaseUrl!, dataDir: "", poolSize: 2 }), openDatabase({ url: testEnv.databaseUrl!, dataDir: "", poolSize: 2 })]);
    const db = embedded.services.deps.db;
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const holding = db.transaction(async (tx) => {
        await tx.execute(sql`select 1 from org_usage where org_id = ${o.org.orgId} for update`);
        await gate;
      });
      const request = (key: string): SingleShotRequest => ({ bucketId: o.bucket.id, key, size: undefined, counts: UNSIZED, slack: UNSIZED, contentType: "application/octet-stream", tags: [], now: new Date(), lifetimeMs: 60_000 });
      const asked = [reserveSingleShot(a!.db, o.org.orgId, request("a.bin")), reserveSingleShot(b!.db, o.org.orgId, request("b.bin"))];
      await eventually(
        async () => {
          const [row] = rowsOf<{ n: string | number }>(await db.execute(sql`select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`));
          return Number(row!.n) >= 2 ? true : undefined;
        },
        { what: "both reservations waiting for the usage row" },
      );
      release();
      await holding;
      const answers = await Promise.all(asked);
      expect(answers.filter((s) => s !== null).length).toBe(1);
      expect(await o.reservations()).toBe(1);
    } finally {
      await Promise.all([a?.close(), b?.close()]);
    }
  });

  test("an organization with nothing outstanding can always presign without a size, even with its allocation full", async () => {
    const o = await orgOn(embedded, 0);
    const p = await o.presign("full.bin");
    expect(p.status).toBe(200);
    expectTooMuchUnconfirmed(await o.presign("more.bin"), 1, UNSIZED);
  });

  test("an ordinary upload without a size (the README's flow, no size) works", async () => {
    const o = await orgOn(embedded);
    const media = await upload(o.org.admin, o.bucket.id, "beach.jpg", bytesOf(200 * KB));
    expect(media.size).toBe(200 * KB);
    // And again: nothing stays counted once confirmed.
    expect((await upload(o.org.admin, o.bucket.id, "beach2.jpg", bytesOf(300 * KB))).size).toBe(300 * KB);
    expect(await o.reservations()).toBe(0);
  });

  test("multipart parts are counted as their URLs are given out, at the per-part maximum, and refused past the bound", async () => {
    const o = await orgOn(embedded, 100 * KB);
    const created = await o.multipart("parts.bin");
    expect(created.status).toBe(200);
    const uploadId = created.body.uploadId;
    const one = await o.part("parts.bin", uploadId, 1);
    expect(one.status).toBe(200);
    expect(new URL(one.body.url).searchParams.get(MAX_LENGTH_PARAM)).toBe(String(UNSIZED));
    // Part 1 counts 1 MiB, the margin: part 2 may carry only the 100 KB the allocation has left.
    const two = await o.part("parts.bin", uploadId, 2);
    expect(two.status).toBe(200);
    expect(new URL(two.body.url).searchParams.get(MAX_LENGTH_PARAM)).toBe(String(100 * KB));
    // Nothing is left: a third part, or any URL without a size, is refused.
    expectTooMuchUnconfirmed(await o.part("parts.bin", uploadId, 3), 1, UNSIZED + 100 * KB);
    expectTooMuchUnconfirmed(await o.presign("other.bin"), 1, UNSIZED + 100 * KB);
    // The node refuses a part past its maximum.
    const refused = await put(one.body.url, one.body.headers, bytesOf(2 * MiB));
    expect(refused.status).toBe(400);
    expect(await s3Code(refused)).toBe("EntityTooLarge");
    // Aborting frees the room.
    expect((await o.abort("parts.bin", uploadId)).status).toBe(200);
    expect((await o.presign("other.bin")).status).toBe(200);
  });

  test("parts stored are measured: they count their size, and the room they leave goes to the next part", async () => {
    const o = await orgOn(embedded, 3 * MiB);
    const uploadId = (await o.multipart("measured.bin")).body.uploadId;
    const urls = [];
    for (let n = 1; n <= 4; n++) {
      const p = await o.part("measured.bin", uploadId, n);
      expect(p.status).toBe(200);
      urls.push(p.body);
    }
    expectTooMuchUnconfirmed(await o.part("measured.bin", uploadId, 5), 1, 4 * UNSIZED);
    // Two parts stored at 100 KB each: measured, they count 200 KB instead of 2 MiB.
    for (const u of urls.slice(0, 2)) expect((await put(u.url, u.headers, bytesOf(100 * KB))).status).toBe(200);
    const five = await o.part("measured.bin", uploadId, 5);
    expect(five.status).toBe(200);
    expect(new URL(five.body.url).searchParams.get(MAX_LENGTH_PARAM)).toBe(String(UNSIZED));
    const [row] = rowsOf<{ bound: string | number }>(
      await embedded.services.deps.db.execute(sql`select bound from upload_reservations where org_id = ${o.org.orgId} and upload_id = ${uploadId}`),
    );
    expect(Number(row!.bound)).toBe(200 * KB + 3 * UNSIZED);
  });

  test("a part URL's maximum shrinks to the room left under the bound; with none left the part is refused", async () => {
    // A larger UPLOAD_UNSIZED_MAX_BYTES, for these calls only.
    const deps = { ...embedded.services.deps, config: { ...embedded.config, uploadUnsizedMaxBytes: 8 * MiB } };
    const o = await orgOn(embedded, 6 * MiB);
    const caller = { orgId: o.org.orgId, userId: o.org.userId, apiKeyId: null, scopes: new Set(["admin"] as const), bucketId: null, principal: `user:${o.org.userId}` };
    const uploadId = (await o.multipart("shrink.bin")).body.uploadId;
    const part = (partNumber: number) => presignUploadPart(deps, caller, { bucketId: o.bucket.id, key: "shrink.bin", uploadId, partNumber });
    const maximum = (url: string) => Number(new URL(url).searchParams.get(MAX_LENGTH_PARAM));
    // Room: 6 MiB free plus 8 MiB of margin. The first part takes 8 MiB, the second the 6 MiB left.
    expect(maximum((await part(1)).url)).toBe(8 * MiB);
    expect(maximum((await part(2)).url)).toBe(6 * MiB);
    const refused = await part(3).catch((err) => err);
    expect(refused.code).toBe("quota_exceeded");
    expect(refused.details).toMatchObject({ unconfirmedUploads: 1, unconfirmedBytes: 14 * MiB });
  });

  test("a part's maximum is UPLOAD_UNSIZED_MAX_BYTES, larger when a declared size needs it to fit in 10,000 parts, at most 5 GiB", () => {
    expect(partMaximum(64 * MiB, 0)).toBe(64 * MiB);
    expect(partMaximum(64 * MiB, 100 * 1024 * MiB)).toBe(64 * MiB);
    // 1 TiB in 10,000 parts: 104.86 MiB each, rounded up to 105 MiB.
    expect(partMaximum(64 * MiB, 1024 * 1024 * MiB)).toBe(105 * MiB);
    // The largest declared size (5 TiB): 525 MiB parts.
    expect(partMaximum(64 * MiB, 5 * 1024 ** 4)).toBe(525 * MiB);
    expect(partMaximum(5 * 1024 * MiB, 0)).toBe(5 * 1024 * MiB);
    expect(partMaximum(64 * MiB, 100 * 1024 ** 4)).toBe(5 * 1024 * MiB);
  });

  test("a multipart upload with a declared size counts its parts within that size, and completes as before", async () => {
    const o = await orgOn(embedded, 100 * KB);
    const created = await o.multipart("declared.bin", 50 * KB);
    const one = await o.part("declared.bin", created.body.uploadId, 1);
    expect(one.status).toBe(200);
    expect((await put(one.body.url, one.body.headers, bytesOf(40 * KB))).status).toBe(200);
    const completed = await o.org.admin.post("/api/presign/complete-upload", { bucketId: o.bucket.id, key: "declared.bin", uploadId: created.body.uploadId });
    expect(completed.status).toBe(200);
    expect((await o.confirm("declared.bin")).body.size).toBe(40 * KB);
    expect(await o.reservations()).toBe(0);
  });

  test("rows an earlier release wrote (no bound) count the bytes they reserved", async () => {
    const o = await orgOn(embedded, 100 * KB);
    const db = embedded.services.deps.db;
    const later = new Date(Date.now() + 3_600_000);
    // Three URLs without a size presigned by the earlier release: they reserved nothing.
    for (let i = 0; i < 3; i++) {
      await db.insert(uploadReservations).values({ orgId: o.org.orgId, bucketId: o.bucket.id, key: `old${i}.bin`, bytes: 0, contentType: "application/octet-stream", expiresAt: later });
    }
    expect((await o.presign("new.bin")).status).toBe(200);
    // A multipart upload it started (no parts counted yet) takes parts from this release.
    await db.insert(uploadReservations).values({ orgId: o.org.orgId, bucketId: o.bucket.id, key: "old-parts.bin", bytes: 0, contentType: "application/octet-stream", uploadId: "from-earlier-release", expiresAt: later });
    expectTooMuchUnconfirmed(await o.presign("next.bin"), 5, UNSIZED);
  });
});

describe("on a store that does not enforce a maximum (S3_ENDPOINT)", () => {
  test("URLs without a size are counted the same, and bytes past the allocation are refused at confirm", async () => {
    const o = await orgOn(unbounded, 100 * KB);
    const first = await o.presign("u0.bin");
    expect(first.status).toBe(200);
    expect(new URL(first.body.url).searchParams.has(MAX_LENGTH_PARAM)).toBe(false);
    expectTooMuchUnconfirmed(await o.presign("u1.bin"), 1, UNSIZED);
    expect((await put(first.body.url, first.body.headers, bytesOf(2 * MiB))).status).toBe(200);
    const refused = await o.confirm("u0.bin");
    expect(refused.status).toBe(403);
    expect(await o.stored("u0.bin")).toBeNull();
    // The confirm released the reservation: the next URL is given.
    expect((await o.presign("u1.bin")).status).toBe(200);
  });

  test("multipart parts are counted the same", async () => {
    const o = await orgOn(unbounded, 100 * KB);
    const uploadId = (await o.multipart("parts.bin")).body.uploadId;
    const one = await o.part("parts.bin", uploadId, 1);
    expect(one.status).toBe(200);
    expect(new URL(one.body.url).searchParams.has(MAX_LENGTH_PARAM)).toBe(false);
    expect((await o.part("parts.bin", uploadId, 2)).status).toBe(200);
    expectTooMuchUnconfirmed(await o.part("parts.bin", uploadId, 3), 1, UNSIZED + 100 * KB);
  });

  test("a part URL waits at most 2 s for the store's list of parts, then counts as it stood", async () => {
    const o = await orgOn(unbounded, 3 * MiB);
    const uploadId = (await o.multipart("hung.bin")).body.uploadId;
    proxy.setMode("hang");
    try {
      // Not a timing assertion: far above 2 s, far below the 60 s storage deadline.
      const res = await fetch(`${unbounded.url}/api/presign/upload-part`, {
        method: "POST",
        headers: { authorization: `Bearer ${o.org.adminKey.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ bucketId: o.bucket.id, key: "hung.bin", uploadId, partNumber: 1 }),
        signal: AbortSignal.timeout(20_000),
      });
      expect(res.status).toBe(200);
    } finally {
      proxy.setMode("pass");
      // The list of parts the service gave up on is still in flight, for up to the 60 s storage
      // deadline: on the PostgreSQL pass stopping the server waited 32 s for it.
      proxy.dropHung();
    }
  }, 60_000);
});

test("one sweep releases every reservation due, oldest first, not only the latest hundred", async () => {
  const o = await orgOn(embedded);
  const db = embedded.services.deps.db;
  const past = (minutes: number) => new Date(Date.now() - minutes * 60_000);
  const rows = Array.from({ length: 250 }, (_, i) => ({
    orgId: o.org.orgId,
    bucketId: o.bucket.id,
    key: `expired/${i}.bin`,
    bytes: 0,
    contentType: "application/octet-stream",
    expiresAt: past(250 - i),
  }));
  await db.insert(uploadReservations).values(rows);
  await embedded.services.maintenance.runOnce();
  expect(await o.reservations()).toBe(0);
});

test("one sweep goes on for at most 100 batches (10,000 reservations by default); the next pass takes the rest", async () => {
  const o = await orgOn(embedded);
  const db = embedded.services.deps.db;
  // Due only for this sweep's clock, a century ahead: the servers' own passes leave them alone.
  const century = 100 * 365 * 86_400_000;
  const rows = Array.from({ length: 250 }, (_, i) => ({
    orgId: o.org.orgId,
    bucketId: o.bucket.id,
    key: `capped/${String(i).padStart(3, "0")}.bin`,
    bytes: 0,
    contentType: "application/octet-stream",
    expiresAt: new Date(Date.now() + century - (250 - i) * 60_000),
  }));
  await db.insert(uploadReservations).values(rows);
  const ahead = { ...embedded.services.deps, clock: { now: () => new Date(Date.now() + century) } };
  // Batches of 2: a pass releases 200, oldest first (rows of earlier tests, if any, then these).
  expect(await sweepExpiredReservations(ahead, 2)).toBe(200);
  const left = (await db.select({ key: uploadReservations.key }).from(uploadReservations).where(eq(uploadReservations.orgId, o.org.orgId))).map((r) => r.key).sort();
  expect(left.length).toBeGreaterThanOrEqual(50);
  expect(left).toEqual(rows.slice(250 - left.length).map((r) => r.key));
  await sweepExpiredReservations(ahead);
  expect(await o.reservations()).toBe(0);
});
