import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { webhookAttempts } from "../../db/schema/index.ts";
import { type BullQueue, startBullWorker } from "../../worker/bullmq-queue.ts";
import { processorsFor } from "../../worker/processors.ts";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { orientedJpeg } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { startTrickler } from "../support/trickle.ts";
import { upload } from "../support/upload.ts";
import { type Receiver, startReceiver } from "../support/webhook-receiver.ts";

/**
 * Found in the 2026 attack run: one organization's slow remote ends (a server that trickles an
 * import, webhook endpoints that never answer) must not hold another organization's thumbnails.
 * Network-bound jobs run in a class of their own (docs/worker.md, "Job classes"); on the
 * embedded run in the in-process queue, on the PostgreSQL + Redis run in BullMQ (a worker in
 * the server, as WORKER_INLINE=true runs it).
 */

let server: TestServer | undefined;
const cleanups: (() => unknown)[] = [];
let serial = 0;

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await (server?.services.queue as BullQueue | undefined)?.obliterate?.().catch(() => {});
  await server?.stop();
  server = undefined;
});

/** A server of its own, with a Redis prefix of its own: other files' leftover jobs must not hold its slots. */
async function serverWith(env: Record<string, string>): Promise<TestServer> {
  server = await startServer({ env: { REDIS_PREFIX: `${testEnv.redisPrefix}-classes-${++serial}`, ...env } });
  return server;
}

/** The import's remote end of the issue: one byte every 2 s. */
const tricklingServer = () => startTrickler(2000);

/** Organization B's picture: its thumbnail must come while A's slow work is still under way. */
async function thumbnailOfAnother(s: TestServer): Promise<TestOrg> {
  const b = await newOrg(s, "Neighbour");
  const bucket = await newBucket(b, "pics");
  const obj = await upload(b.admin, bucket.id, "photo.jpg", await orientedJpeg(640, 480, 1), { contentType: "image/jpeg" });
  await eventually(async () => ((await b.admin.get(`/api/media/${obj.id}`)).body.thumbnail?.state === "ready" ? true : undefined), {
    what: "the other organization's thumbnail (it waited behind the slow jobs)",
  });
  return b;
}

describe("slow network work does not hold another organization's thumbnails", () => {
  test("two imports from a server that trickles one byte every 2 s (finding 1)", async () => {
    const slow = tricklingServer();
    cleanups.push(slow.stop);
    // The byte-rate floor is out of the way here: this is about where the imports run, not how long they may.
    const s = await serverWith({ IMPORT_ALLOW_PRIVATE: "true", IMPORT_MIN_RATE_BYTES: "1" });
    const a = await newOrg(s, "Trickler");
    const target = await newBucket(a, "imports");
    const ids: string[] = [];
    for (const key of ["one.bin", "two.bin"]) {
      const res = await a.admin.post("/api/imports", { bucketId: target.id, key, url: slow.url(), contentType: "application/octet-stream" });
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    const states = () => Promise.all(ids.map(async (id) => (await a.admin.get(`/api/imports/${id}`)).body.state as string));
    await eventually(async () => ((await states()).every((st) => st === "fetching") && slow.requests() >= 2 ? true : undefined), { what: "both imports to be fetching" });

    await thumbnailOfAnother(s);
    // Ready while both imports still hold their slots (they would run until IMPORT_TIMEOUT_MS, 300 s).
    expect(await states()).toEqual(["fetching", "fetching"]);
  });

  test("20 endpoints that never answer, each sent 2 events (finding 2)", async () => {
    const hanging: Receiver = startReceiver();
    hanging.respond = () => ({ hang: true });
    cleanups.push(() => hanging.stop());
    cleanups.push(() => hanging.release());
    // Each attempt held for 60 s instead of 10: no slot A's deliveries hold frees while B's
    // thumbnail is made, so the thumbnail cannot have been made in a slot a delivery gave up
    // (turns between organizations alone would give it the first such slot).
    const s = await serverWith({ WEBHOOK_TIMEOUT_MS: "60000" });
    const a = await newOrg(s, "Hanger");
    for (let i = 0; i < 20; i++) {
      const res = await a.admin.post("/api/webhooks", { url: `${hanging.url}/${i}`, eventTypes: ["bucket.created"] });
      expect(res.status).toBe(201);
    }
    await newBucket(a, "first");
    await newBucket(a, "second");
    await eventually(async () => (hanging.received.length >= 2 ? true : undefined), { what: "the deliveries to start" });

    // 40 deliveries each held for WEBHOOK_TIMEOUT_MS (10 s by default): behind them, 200 s.
    await thumbnailOfAnother(s);
    // Made while every delivery begun was still hanging: none of A's attempts had ended.
    expect(await s.services.deps.db.select().from(webhookAttempts).where(eq(webhookAttempts.orgId, a.orgId))).toEqual([]);
    expect(hanging.received.length).toBeGreaterThanOrEqual(2);
  });
});

describe("an import's byte-rate floor", () => {
  test("an import from a server that trickles fails as too slow after one window, fetched once, long before IMPORT_TIMEOUT_MS", async () => {
    const slow = tricklingServer();
    cleanups.push(slow.stop);
    // Half a byte a second against a floor of 1 KiB in 2 s; the whole fetch may take 300 s.
    const s = await serverWith({ IMPORT_ALLOW_PRIVATE: "true", IMPORT_MIN_RATE_BYTES: "1024", IMPORT_MIN_RATE_WINDOW_MS: "2000" });
    const a = await newOrg(s, "Trickler");
    const target = await newBucket(a, "imports");
    const res = await a.admin.post("/api/imports", { bucketId: target.id, key: "slow.bin", url: slow.url(), contentType: "application/octet-stream" });
    expect(res.status).toBe(202);
    const done = await eventually(
      async () => {
        const got = (await a.admin.get(`/api/imports/${res.body.id}`)).body;
        return got.state === "failed" ? got : undefined;
      },
      { what: "the import to be stopped by the rate floor" },
    );
    expect(done.error).toEqual({ code: "timeout", message: "Fewer than 1024 bytes arrived in 2 s: the transfer was too slow and was stopped" });
    // A remote side's failure is final: not fetched again.
    expect(slow.requests()).toBe(1);
  });
});

describe("fairness between organizations inside a class", () => {
  test("an organization's backlog of hanging deliveries delays another's delivery by about one job, not the backlog", async () => {
    const hanging: Receiver = startReceiver();
    hanging.respond = () => ({ hang: true });
    const quick: Receiver = startReceiver();
    cleanups.push(() => hanging.stop(), () => quick.stop(), () => hanging.release());
    // Two io slots and a 3 s deadline per attempt: a's 12 deliveries are 18 s of backlog.
    const s = await serverWith({ WORKER_IO_CONCURRENCY: "2", WEBHOOK_TIMEOUT_MS: "3000", WEBHOOK_ATTEMPTS: "1" });
    const a = await newOrg(s, "Backlog");
    for (let i = 0; i < 12; i++) expect((await a.admin.post("/api/webhooks", { url: `${hanging.url}/${i}`, eventTypes: ["bucket.created"] })).status).toBe(201);
    const b = await newOrg(s, "Neighbour");
    expect((await b.admin.post("/api/webhooks", { url: quick.url, eventTypes: ["bucket.created"] })).status).toBe(201);

    await newBucket(a, "burst");
    await eventually(async () => (hanging.received.length >= 2 ? true : undefined), { what: "a's deliveries to hold both slots" });
    await newBucket(b, "mine");
    await eventually(async () => (quick.received.length >= 1 ? true : undefined), { what: "b's delivery" });
    // First in first out, b's delivery would have come after all 12 of a's; it takes the
    // first or second slot that frees instead.
    expect(hanging.received.length).toBeLessThanOrEqual(4);
  });
});

describe.skipIf(!testEnv.redisUrl)("the outstanding-job counters behind BullMQ's priorities", () => {
  test("counted in at add and out when a job ends; never below zero; they expire when unused", async () => {
    const { default: Redis } = await import("ioredis");
    const { FAIRNESS_TTL_MS, FairnessCounters } = await import("../../worker/fair-share.ts");
    const redis = new Redis(testEnv.redisUrl!);
    const counters = new FairnessCounters(redis, `${testEnv.redisPrefix}-fair-${crypto.randomUUID()}`);
    try {
      expect(await counters.queued("io", "org-a")).toBe(1);
      expect(await counters.queued("io", "org-a")).toBe(2);
      expect(await counters.queued("cpu", "org-a")).toBe(1);
      expect(await counters.queued("io", "org-b")).toBe(1);
      const ttl = await redis.pttl(counters.key("io", "org-a"));
      expect(ttl).toBeGreaterThan(FAIRNESS_TTL_MS - 60_000);
      expect(ttl).toBeLessThanOrEqual(FAIRNESS_TTL_MS);
      await counters.settled("io", "org-a");
      expect(await redis.get(counters.key("io", "org-a"))).toBe("1");
      await counters.settled("io", "org-a");
      // At zero the key goes: a settle too many (a drifted counter) starts the next count at 1, never below.
      expect(await redis.exists(counters.key("io", "org-a"))).toBe(0);
      await counters.settled("io", "org-a");
      expect(await redis.exists(counters.key("io", "org-a"))).toBe(0);
      expect(await counters.queued("io", "org-a")).toBe(1);
    } finally {
      for (const key of await redis.keys(`${counters.key("*", "*")}`)) await redis.del(key);
      redis.disconnect();
    }
  });

  test("a job is queued with its organization's outstanding count as priority, and counted out when it completes", async () => {
    // No worker in the server: the jobs stay queued until the test starts one.
    const s = await serverWith({ WORKER_INLINE: "false" });
    const queue = s.services.queue as BullQueue;
    const org = crypto.randomUUID();
    const ids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    // Jobs of an organization that does not exist: a search.sync of nothing completes at once.
    for (const id of ids) await queue.add({ id, name: "search.sync", data: { orgId: org, objectIds: [] } });
    await queue.add({ id: crypto.randomUUID(), name: "search.sync", data: { orgId: crypto.randomUUID(), objectIds: [] } });
    expect(await Promise.all(ids.map(async (id) => (await queue.getJob(id))!.opts.priority))).toEqual([1, 2, 3]);
    const { default: Redis } = await import("ioredis");
    const redis = new Redis(testEnv.redisUrl!);
    const counter = `${s.config.redisPrefix}:fairness:io:${org}`;
    let worker: ReturnType<typeof startBullWorker> | undefined;
    try {
      expect(await redis.get(counter)).toBe("3");
      worker = startBullWorker(s.config, processorsFor(s.services.deps), s.services.deps.log);
      await eventually(async () => ((await Promise.all(ids.map(async (id) => (await queue.getJob(id))?.finishedOn))).every(Boolean) ? true : undefined), { what: "the jobs to complete" });
      await eventually(async () => ((await redis.exists(counter)) === 0 ? true : undefined), { what: "the counter to be back at zero" });
    } finally {
      await worker?.close();
      redis.disconnect();
    }
  });
});
