import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { derivativePrefix } from "../../domain/media/storage-keys.ts";
import type { S3Storage } from "../../storage/s3.ts";
import type { BullQueue } from "../../worker/bullmq-queue.ts";
import { aroundGenerate } from "../support/around-generate.ts";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import { type PrivateRedis, privateRedis, redisServerPath } from "../support/faults.ts";
import { png } from "../support/media-files.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * Redis stopped. The API keeps answering (the guards fail open; that part is
 * test/integration/guards-fail-open.test.ts), and the BullMQ work resumes when Redis returns:
 * jobs produced during the outage wait in the outbox, and a job whose worker lost Redis in the
 * middle of it is finished, its thumbnail made once. The Redis is a private one of this file,
 * with an append-only file as a queue's Redis should have, so the file runs in both modes.
 */

let redis: PrivateRedis & { destroy(): Promise<void> };
let server: TestServer;
let org: TestOrg;
let bucket: { id: string };
/** While set, the next derivative job reports its object and waits for `release`. */
let hold: { started: (id: string) => void; release: Promise<void> } | null = null;

const thumbnailState = async (id: string) => (await org.admin.get(`/api/media/${id}`)).body.thumbnail?.state as string | undefined;

async function derivativeObjects(objectId: string): Promise<string[]> {
  const { ListObjectsV2Command } = await import("@aws-sdk/client-s3");
  const storage = server.services.deps.storage as S3Storage;
  const out = await storage.client.send(new ListObjectsV2Command({ Bucket: server.config.s3.bucket, Prefix: derivativePrefix(bucket.id, objectId) }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

describe.skipIf(!redisServerPath)("Redis stopped and started again under background work", () => {
  beforeAll(async () => {
    redis = await privateRedis({ persistent: true });
    server = await startServer({
      env: {
        REDIS_URL: redis.url,
        REDIS_PREFIX: `faults-${crypto.randomUUID().slice(0, 8)}`,
        WORKER_LOCK_MS: "1500",
        WORKER_STALLED_INTERVAL_MS: "500",
        WORKER_BACKOFF_MS: "100",
      },
      processors: aroundGenerate(async (objectId, work) => {
        const held = hold;
        if (held) {
          hold = null;
          held.started(objectId);
          await held.release;
        }
        await work();
      }),
    });
    expect(server.services.backends).toMatchObject({ queue: "bullmq", jobs: "here", guards: "redis" });
    org = await newOrg(server);
    bucket = (await org.admin.post("/api/buckets", { name: "redis-faults" })).body;
  }, 3 * WAIT_CEILING_MS);
  afterAll(async () => {
    await (server?.services.queue as BullQueue | undefined)?.obliterate().catch(() => {});
    await server?.stop();
    await redis?.destroy();
  });

  test("uploads keep working while Redis is down; their thumbnails and the job in hand are done once it is back", async () => {
    const before = await upload(org.admin, bucket.id, "before.png", await png(200, 100), { contentType: "image/png" });
    await eventually(async () => ((await thumbnailState(before.id)) === "ready" ? true : undefined), { what: "the first thumbnail" });

    // A job in hand when Redis goes away.
    let release!: () => void;
    const started = new Promise<string>((resolve) => {
      hold = { started: resolve, release: new Promise<void>((r) => (release = r)) };
    });
    const inHand = await upload(org.admin, bucket.id, "in-hand.png", await png(300, 150), { contentType: "image/png" });
    expect(await started).toBe(inHand.id);

    await redis.kill();
    // Requests are answered as usual: confirm's job waits in the outbox, the guards let it through.
    const during = await upload(org.admin, bucket.id, "during.png", await png(400, 200), { contentType: "image/png" });
    const again = await org.admin.post("/api/buckets", { name: "made-during" }, { "idempotency-key": "during" });
    expect(again.status).toBe(201);
    // The job in hand finishes its work while its queue is gone; BullMQ cannot record that.
    release();
    expect(await thumbnailState(during.id)).toBe("pending");

    await redis.start();
    for (const [obj, size] of [
      [during, { width: 320, height: 160 }],
      [inHand, { width: 300, height: 150 }],
    ] as const) {
      const done = await eventually(
        async () => {
          const res = await org.admin.get(`/api/media/${obj.id}`);
          return res.body.thumbnail?.state === "ready" ? res.body : undefined;
        },
        { what: `the thumbnail of ${obj.key} after Redis returned`, timeoutMs: WAIT_CEILING_MS },
      );
      expect(done.thumbnail).toMatchObject(size);
    }
    // However often the job in hand ran, its thumbnail exists once.
    expect(await derivativeObjects(inHand.id)).toHaveLength(1);
    expect(await derivativeObjects(during.id)).toHaveLength(1);
  }, 3 * WAIT_CEILING_MS);
});
