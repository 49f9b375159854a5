import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../domain/core/clock.ts";
import { Api } from "../support/http.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { eventually } from "../support/eventually.ts";
import { bytesOf, upload } from "../support/upload.ts";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { testEnv } from "../support/env.ts";
import { rollUpEgress } from "../../domain/usage/egress-rollup.ts";

let server: TestServer;
const clock = new ManualClock();
const GiB = 1024 ** 3;
const DAY = 86_400_000;

beforeAll(async () => {
  server = await startServer({ clock, ownDatabase: true });
}, 60_000);
afterAll(() => server.stop());

async function orgWithBucket(name = "usage") {
  const org = await newOrg(server);
  const bucket = (await org.admin.post("/api/buckets", { name })).body as { id: string };
  return { org, bucket };
}

const usageOf = async (org: TestOrg) => {
  const res = await org.admin.get("/api/usage");
  expect(res.status).toBe(200);
  return res.body;
};
const eventsOf = async (org: TestOrg, query = "") => {
  const res = await org.admin.get(`/api/usage/events${query}`);
  expect(res.status).toBe(200);
  return res.body as { data: any[]; total: number; hasMore: boolean };
};
const today = () => clock.now().toISOString().slice(0, 10);
const dayOffset = (n: number) => new Date(clock.now().getTime() + n * DAY).toISOString().slice(0, 10);

/** Raw MCP requests, so the number of HTTP requests is exactly what the test sends. */
async function mcpRequest(secret: string, id: number) {
  const res = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list" }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

describe("usage summary", () => {
  test("a new organization starts on the free tier with nothing used; every field is an integer", async () => {
    const { org } = await orgWithBucket();
    const u = await usageOf(org);
    expect(u).toMatchObject({ usedStorage: 0, reservedStorage: 0, allocatedStorage: 5 * GiB, objectCount: 0, egressThisMonth: 0, plan: "free", month: today().slice(0, 7) });
    for (const k of ["usedStorage", "reservedStorage", "allocatedStorage", "objectCount", "egressThisMonth", "apiCallsThisMonth"]) expect(Number.isInteger(u[k])).toBe(true);
  });

  test("uploads, an overwrite and a delete move the counters, each recorded once in the ledger", async () => {
    const { org, bucket } = await orgWithBucket();
    const a = await upload(org.admin, bucket.id, "a.bin", bytesOf(1000));
    const b = await upload(org.admin, bucket.id, "b.bin", bytesOf(2500));
    expect(await usageOf(org)).toMatchObject({ usedStorage: 3500, objectCount: 2, reservedStorage: 0 });
    await upload(org.admin, bucket.id, "a.bin", bytesOf(400, 2));
    expect(await usageOf(org)).toMatchObject({ usedStorage: 2900, objectCount: 2 });
    // confirming the same bytes again changes nothing and records nothing
    await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key: "a.bin" });
    expect((await org.admin.delete(`/api/media/${b.id}`)).status).toBe(200);
    expect(await usageOf(org)).toMatchObject({ usedStorage: 400, objectCount: 1 });

    const events = await eventsOf(org);
    expect(events.total).toBe(4);
    expect(events.data.map((e) => [e.type, e.key, e.bytes, e.delta])).toEqual([
      ["object_deleted", "b.bin", 2500, -2500],
      ["upload_confirmed", "a.bin", 400, -600],
      ["upload_confirmed", "b.bin", 2500, 2500],
      ["upload_confirmed", "a.bin", 1000, 1000],
    ]);
    expect(events.data[1]).toMatchObject({ objectId: a.id, bucketId: bucket.id, details: { overwrite: true, previousSize: 1000 }, amountCents: null });
    expect(events.data[0].objectId).toBe(b.id);
  });

  test("downloads and streams count egress this month, in the ledger and in today's history point", async () => {
    const { org, bucket } = await orgWithBucket();
    const obj = await upload(org.admin, bucket.id, "movie.mp4", bytesOf(4321), { contentType: "video/mp4" });
    expect((await org.admin.post("/api/presign/download", { objectId: obj.id })).status).toBe(200);
    expect((await org.admin.get(`/api/media/${obj.id}/stream`)).status).toBe(302);
    expect((await org.admin.post("/api/presign/download", { objectId: obj.id })).status).toBe(200);
    expect((await usageOf(org)).egressThisMonth).toBe(3 * 4321);
    const egress = (await eventsOf(org)).data.filter((e) => e.type === "download" || e.type === "stream");
    expect(egress.map((e) => [e.type, e.bytes, e.objectId])).toEqual([
      ["download", 4321, obj.id],
      ["stream", 4321, obj.id],
      ["download", 4321, obj.id],
    ]);
    const history = (await org.admin.get("/api/usage/history?days=1")).body;
    expect(history.data).toEqual([expect.objectContaining({ date: today(), egressBytes: 3 * 4321, usedStorage: 4321 })]);
  });

  test("concurrent downloads: egress totals exact before, during and after the rollup, none lost or counted twice", async () => {
    const { org, bucket } = await orgWithBucket();
    const obj = await upload(org.admin, bucket.id, "hot.bin", bytesOf(1000));
    const base = (await usageOf(org)).egressThisMonth;
    const download = async () => expect((await org.admin.post("/api/presign/download", { objectId: obj.id })).status).toBe(200);
    // Downloads race rollups of small batches: every event is folded exactly once or still pending.
    const rollups = (async () => {
      for (let i = 0; i < 10; i++) await rollUpEgress(server.services.deps.db, 7);
    })();
    await Promise.all([...Array.from({ length: 40 }, download), rollups]);
    expect((await usageOf(org)).egressThisMonth).toBe(base + 40 * 1000);
    await server.services.rollup.flush();
    const [pending] = rowsOf<{ n: number }>(
      await server.services.deps.db.execute(sql`select count(*)::int as n from usage_events where org_id = ${org.orgId} and rollup_pending`),
    );
    expect(pending!.n).toBe(0);
    expect((await usageOf(org)).egressThisMonth).toBe(base + 40 * 1000);
    const history = (await org.admin.get("/api/usage/history?days=1")).body;
    expect(history.data).toEqual([expect.objectContaining({ date: today(), egressBytes: base + 40 * 1000, usedStorage: 1000, objectCount: 1 })]);
  });

  test("a refused download counts no egress: unknown object 404, another bucket's object 403 for a restricted key", async () => {
    const { org, bucket } = await orgWithBucket();
    const other = (await org.admin.post("/api/buckets", { name: "other" })).body as { id: string };
    const obj = await upload(org.admin, bucket.id, "mine.bin", bytesOf(500));
    const restricted = await org.keyClient(["read"], { bucketId: other.id });
    expect((await restricted.post("/api/presign/download", { objectId: obj.id })).status).toBe(403);
    expect((await restricted.get(`/api/media/${obj.id}/stream`)).status).toBe(403);
    expect((await org.admin.post("/api/presign/download", { objectId: crypto.randomUUID() })).status).toBe(404);
    expect((await usageOf(org)).egressThisMonth).toBe(0);
    expect((await eventsOf(org)).data.filter((e) => e.type === "download" || e.type === "stream")).toEqual([]);
    // The same key in the object's bucket is served and counted once.
    const inBucket = await org.keyClient(["read"], { bucketId: bucket.id });
    expect((await inBucket.post("/api/presign/download", { objectId: obj.id })).status).toBe(200);
    expect((await usageOf(org)).egressThisMonth).toBe(500);
  });

  // PGlite has one connection: a held transaction would block every other query, locked rows or not.
  test.skipIf(testEnv.mode === "embedded")("a download does not wait for the organization's usage rows", async () => {
    const { org, bucket } = await orgWithBucket();
    const obj = await upload(org.admin, bucket.id, "locked.bin", bytesOf(10));
    expect((await org.admin.post("/api/presign/download", { objectId: obj.id })).status).toBe(200);
    await server.services.rollup.flush(); // the month's and the day's rows exist now
    let answered = false;
    // Hold both counter rows locked (as a slow rollup or meter flush would) while downloading.
    await server.services.deps.db.transaction(async (tx) => {
      await tx.execute(sql`select 1 from usage_monthly where org_id = ${org.orgId} for update`);
      await tx.execute(sql`select 1 from usage_daily where org_id = ${org.orgId} for update`);
      expect((await org.admin.post("/api/presign/download", { objectId: obj.id })).status).toBe(200);
      expect((await usageOf(org)).egressThisMonth).toBe(20);
      answered = true;
    });
    expect(answered).toBe(true);
    await server.services.rollup.flush();
    expect((await usageOf(org)).egressThisMonth).toBe(20);
  });

  test("the purge of a deleted object is recorded, without counting its bytes twice", async () => {
    const { org, bucket } = await orgWithBucket();
    const obj = await upload(org.admin, bucket.id, "gone.txt", "bytes");
    await org.admin.delete(`/api/media/${obj.id}`);
    clock.advance(8 * DAY);
    try {
      await server.services.maintenance.runOnce();
      // The purge runs as a job (in-process or on BullMQ): wait for its event.
      const purged = await eventually(async () => {
        const e = await eventsOf(org, "?type=object_purged");
        return e.data.length > 0 ? e : undefined;
      }, { what: "the purge event" });
      expect(purged.data).toEqual([expect.objectContaining({ type: "object_purged", objectId: obj.id, key: "gone.txt", bytes: 5, delta: 0 })]);
      expect(await usageOf(org)).toMatchObject({ usedStorage: 0, objectCount: 0 });
    } finally {
      clock.advance(-8 * DAY);
    }
  });
});

describe("API calls", () => {
  test("every authenticated REST call and MCP request counts, exactly, once flushed", async () => {
    const { org } = await orgWithBucket();
    const other = await newOrg(server);
    await server.services.apiCalls.flush();
    const before = (await usageOf(org)).apiCallsThisMonth; // this call is counted too (not yet flushed)
    for (let i = 0; i < 7; i++) await org.admin.get("/api/buckets");
    // failures count as well: the call was made and authenticated
    expect((await org.admin.get(`/api/buckets/${crypto.randomUUID()}`)).status).toBe(404);
    for (let i = 0; i < 3; i++) await mcpRequest(org.adminKey.secret, i);
    // unauthenticated calls and other organizations' calls do not
    expect((await server.api.get("/api/usage")).status).toBe(401);
    expect((await server.api.withToken("0".repeat(64)).get("/api/buckets")).status).toBe(401);
    await other.admin.get("/api/buckets");
    await server.services.apiCalls.flush();
    const after = (await usageOf(org)).apiCallsThisMonth;
    expect(after).toBe(before + 1 + 7 + 1 + 3);
    await server.services.apiCalls.flush();
    // the day's point holds the same calls (the organization is new, so all of them are today's)
    const history = (await org.admin.get("/api/usage/history?days=1")).body;
    expect(history.data[0].apiCalls).toBe(after + 1);
  });

  test("counts still in memory are written on a clean shutdown", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "media-usage-restart-"));
    try {
      const first = await startServer({ dataDir });
      const org = await newOrg(first);
      await first.services.apiCalls.flush();
      const before = (await org.admin.get("/api/usage")).body.apiCallsThisMonth;
      for (let i = 0; i < 5; i++) await org.admin.get("/api/buckets");
      await first.stop();
      const second = await startServer({ dataDir });
      try {
        const res = await new Api(second.url, org.adminKey.secret).get("/api/usage");
        expect(res.status).toBe(200);
        expect(res.body.apiCallsThisMonth).toBe(before + 1 + 5);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    // Two starts on a fresh embedded database (no template copy): migrations run twice.
  }, 90_000);
});

describe("usage history", () => {
  test("one point per day; quiet days repeat the previous day's storage; days before the organization are left out", async () => {
    const { org, bucket } = await orgWithBucket();
    const keep = await upload(org.admin, bucket.id, "keep.bin", bytesOf(1000));
    const drop = await upload(org.admin, bucket.id, "drop.bin", bytesOf(500));
    const first = await org.admin.get("/api/usage/history");
    expect(first.body).toMatchObject({ from: dayOffset(-29), to: today() });
    expect(first.body.data).toEqual([{ date: today(), usedStorage: 1500, allocatedStorage: 5 * GiB, objectCount: 2, egressBytes: 0, apiCalls: expect.any(Number) }]);
    const d0 = today();
    clock.advance(3 * DAY);
    try {
      await org.admin.delete(`/api/media/${drop.id}`);
      await org.admin.post("/api/presign/download", { objectId: keep.id });
      const week = (await org.admin.get("/api/usage/history?days=7")).body;
      expect(week.from).toBe(dayOffset(-6));
      expect(week.to).toBe(today());
      const points = week.data.map((p: any) => [p.date, p.usedStorage, p.objectCount, p.egressBytes]);
      expect(points).toEqual([
        [d0, 1500, 2, 0],
        [dayOffset(-2), 1500, 2, 0],
        [dayOffset(-1), 1500, 2, 0],
        [today(), 1000, 1, 1000],
      ]);
      expect(week.data[1].apiCalls).toBe(0);
      // a window that starts on a quiet day carries the state in from before it
      const two = (await org.admin.get("/api/usage/history?days=2")).body.data;
      expect(two.map((p: any) => [p.date, p.usedStorage, p.allocatedStorage])).toEqual([
        [dayOffset(-1), 1500, 5 * GiB],
        [today(), 1000, 5 * GiB],
      ]);
    } finally {
      clock.advance(-3 * DAY);
    }
  });

  test("days is 1..365, default 30", async () => {
    const { org } = await orgWithBucket();
    for (const days of ["0", "366", "1.5", "abc", "-1"]) {
      const res = await org.admin.get(`/api/usage/history?days=${days}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details[0].path).toBe("days");
    }
    expect((await org.admin.get("/api/usage/history?days=365")).body.from).toBe(dayOffset(-364));
    expect((await org.admin.get("/api/usage/history?days=1")).body.from).toBe(today());
  });
});

describe("usage events", () => {
  test("pages newest first with total and hasMore; filters by type and by the days window", async () => {
    const { org, bucket } = await orgWithBucket();
    for (const k of ["1", "2", "3", "4"]) await upload(org.admin, bucket.id, `e${k}.txt`, k);
    const p1 = await eventsOf(org, "?limit=3");
    expect(p1).toMatchObject({ total: 4, hasMore: true });
    expect(p1.data.map((e) => e.key)).toEqual(["e4.txt", "e3.txt", "e2.txt"]);
    const p2 = await eventsOf(org, "?limit=3&offset=3");
    expect(p2).toMatchObject({ total: 4, hasMore: false });
    expect(p2.data.map((e) => e.key)).toEqual(["e1.txt"]);
    expect((await eventsOf(org, "?type=object_deleted")).total).toBe(0);
    expect((await eventsOf(org, "?type=upload_confirmed")).total).toBe(4);
    for (const e of p1.data) expect(Object.keys(e).sort()).toEqual(["amountCents", "at", "bucketId", "bytes", "delta", "details", "id", "key", "objectId", "type"]);
    clock.advance(2 * DAY);
    try {
      expect((await eventsOf(org, "?days=2")).total).toBe(0);
      expect((await eventsOf(org, "?days=3")).total).toBe(4);
      expect((await eventsOf(org)).total).toBe(4);
    } finally {
      clock.advance(-2 * DAY);
    }
  });

  test("bounds: days 1..365, limit 1..200 (default 50), offset >= 0, type from the list", async () => {
    const { org } = await orgWithBucket();
    const cases: [string, string][] = [
      ["?days=0", "days"],
      ["?days=366", "days"],
      ["?limit=0", "limit"],
      ["?limit=201", "limit"],
      ["?limit=2.5", "limit"],
      ["?offset=-1", "offset"],
      ["?type=nonsense", "type"],
    ];
    for (const [query, path] of cases) {
      const res = await org.admin.get(`/api/usage/events${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect((await org.admin.get("/api/usage/events?limit=200&days=365")).status).toBe(200);
  });
});

describe("access", () => {
  test("usage needs read; other organizations never see each other's usage", async () => {
    const a = await orgWithBucket();
    const b = await orgWithBucket();
    const obj = await upload(a.org.admin, a.bucket.id, "mine.bin", bytesOf(777));
    await a.org.admin.post("/api/presign/download", { objectId: obj.id });
    const read = await b.org.keyClient(["read"]);
    const seen = (await read.get("/api/usage")).body;
    expect(seen).toMatchObject({ usedStorage: 0, objectCount: 0, egressThisMonth: 0 });
    expect((await read.get("/api/usage/events")).body).toMatchObject({ data: [], total: 0 });
    expect((await read.get("/api/usage/history")).body.data.every((p: any) => p.usedStorage === 0 && p.egressBytes === 0)).toBe(true);
    expect((await usageOf(a.org)).usedStorage).toBe(777);
    const write = await b.org.keyClient(["write"]);
    expect((await write.get("/api/usage")).status).toBe(403);
  });
});
