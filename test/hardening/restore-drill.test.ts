// One pass: the Redis is one of its own, and which keys the service writes there does not depend on the database.
import { afterAll, beforeAll, expect, test } from "bun:test";
import Redis from "ioredis";
import { eventually } from "../support/eventually.ts";
import { privateRedis } from "../support/faults.ts";
import { png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * A restore drill beside production shares production's Redis under a REDIS_PREFIX of its own
 * (docs/operations.md, "Restore drills beside production"). That is safe only if everything the
 * service keeps in Redis is under the prefix: queues, guards (rate limits, idempotency), the
 * key-rotation channel. A server on a Redis of its own does each of those once, and then no key
 * and no channel may be outside its prefix.
 */
const PREFIX = "media-drill";
let redis: Awaited<ReturnType<typeof privateRedis>>;
let server: TestServer;
let client: Redis;

beforeAll(async () => {
  redis = await privateRedis();
  // A rate limit low enough that the calls' state (a GCRA key, which expires once the bucket has
  // drained) is still in Redis when the keys are read.
  server = await startServer({ env: { REDIS_URL: redis.url, REDIS_PREFIX: PREFIX, RATE_LIMIT_PER_MINUTE: "600" } });
  client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
}, 120_000);

afterAll(async () => {
  client?.disconnect();
  await server?.stop();
  await redis?.destroy();
});

test("every Redis key and channel the service uses is under REDIS_PREFIX: queues, guards, key rotation", async () => {
  const org = await newOrg(server);
  const bucket = await newBucket(org);
  // A job through the queue: the upload's thumbnail.
  const object = await upload(org.admin, bucket.id, "drill.png", new Uint8Array(await png(120, 80)), { contentType: "image/png" });
  await eventually(async () => ((await org.admin.get(`/api/media/${object.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "the thumbnail" });
  // An idempotent call, replayed.
  const first = await org.admin.post("/api/buckets", { name: "drill-idem" }, { "idempotency-key": "drill-1" });
  const again = await org.admin.post("/api/buckets", { name: "drill-idem" }, { "idempotency-key": "drill-1" });
  expect([first.status, again.body.id]).toEqual([201, first.body.id]);
  // A key deleted (the news is published to every instance). Every call above was counted against its key's rate limit.
  const reader = await org.keyClient(["read"]);
  expect((await org.admin.delete(`/api/api-keys/${reader.keyId}`)).status).toBe(200);

  // Twenty calls just before the keys are read: their rate limit state lives about two seconds
  // (the limit's 100 ms per call), where one call's would be gone after a slow moment.
  await Promise.all(Array.from({ length: 20 }, () => org.admin.get("/api/buckets")));
  const keys = await client.keys("*");
  expect(keys.length).toBeGreaterThan(0);
  expect(keys.filter((k) => !k.startsWith(`${PREFIX}:`))).toEqual([]);
  // Each kind of state is there, so the check above looked at all of them.
  for (const part of [":rl:", ":idem:"]) expect({ part, found: keys.some((k) => k.includes(part)) }).toEqual({ part, found: true });
  expect(keys.some((k) => k.startsWith(`${PREFIX}:jobs`))).toBe(true);
  const channels = (await client.pubsub("CHANNELS", "*")) as string[];
  expect(channels.length).toBeGreaterThan(0);
  expect(channels.filter((c) => !c.startsWith(`${PREFIX}:`))).toEqual([]);
}, 120_000);
