import { afterEach, describe, expect, test } from "bun:test";
import type { BullQueue } from "../../worker/bullmq-queue.ts";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { orientedJpeg } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";
import { type Receiver, startReceiver } from "../support/webhook-receiver.ts";

/**
 * Issue 37, findings 1 and 2: one organization's slow remote ends (a server that trickles an
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

/** A file server that answers 200 at once, then sends one byte every two seconds, for ever. */
function tricklingServer() {
  let requests = 0;
  const timers = new Set<ReturnType<typeof setInterval>>();
  const s = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch() {
      requests++;
      let timer: ReturnType<typeof setInterval>;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array([0x61]));
          timer = setInterval(() => {
            try {
              controller.enqueue(new Uint8Array([0x61]));
            } catch {
              clearInterval(timer);
            }
          }, 2000);
          timers.add(timer);
        },
        cancel() {
          clearInterval(timer);
        },
      });
      return new Response(body, { headers: { "content-type": "application/octet-stream" } });
    },
  });
  return {
    url: `http://127.0.0.1:${s.port}/slow.bin`,
    requests: () => requests,
    stop: () => {
      for (const t of timers) clearInterval(t);
      s.stop(true);
    },
  };
}

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
    const s = await serverWith({ IMPORT_ALLOW_PRIVATE: "true" });
    const a = await newOrg(s, "Trickler");
    const target = await newBucket(a, "imports");
    const ids: string[] = [];
    for (const key of ["one.bin", "two.bin"]) {
      const res = await a.admin.post("/api/imports", { bucketId: target.id, key, url: slow.url, contentType: "application/octet-stream" });
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
    const s = await serverWith({});
    const a = await newOrg(s, "Hanger");
    for (let i = 0; i < 20; i++) {
      const res = await a.admin.post("/api/webhooks", { url: `${hanging.url}/${i}`, eventTypes: ["bucket.created"] });
      expect(res.status).toBe(201);
    }
    await newBucket(a, "first");
    await newBucket(a, "second");
    await eventually(async () => (hanging.received.length >= 2 ? true : undefined), { what: "the deliveries to start" });

    // 40 deliveries each held for WEBHOOK_TIMEOUT_MS (10 s): behind them, 200 s.
    await thumbnailOfAnother(s);
  });
});
