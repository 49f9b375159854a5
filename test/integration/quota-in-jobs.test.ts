import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { orgUsage } from "../../db/schema/index.ts";
import type { JobPayloads } from "../../domain/core/jobs.ts";
import type { Logger } from "../../domain/ports/log.ts";
import type { Processors } from "../../domain/ports/queue.ts";
import { liveUsage } from "../../domain/usage/counters.ts";
import { processorsFor } from "../../worker/processors.ts";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";
import type { BullQueue } from "../../worker/bullmq-queue.ts";

/**
 * Found in the 2026 attack run: a refusal that running the job again cannot change (the organization's
 * storage allocation is full) ends the job at once. A set rendition that cannot fit is refused
 * before anything is rendered, or after one render, never WORKER_ATTEMPTS times; an import
 * whose answer had no Content-Length and turned out too large for the allocation is fetched once
 * and fails as quota_exceeded, not three times as internal_error.
 */
let server: TestServer;
/** Runs of `sets.generate` per set, and the set renders the worker logged. */
const generateRuns = new Map<string, number>();
const renders: string[] = [];
let fetches = 0;

const files = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch() {
    fetches++;
    // 5,000 bytes streamed without a Content-Length: the size is learnt only by reading it all.
    return new Response(
      new ReadableStream({
        start(c) {
          c.enqueue(new Uint8Array(5000).fill(3));
          c.close();
        },
      }),
      { headers: { "content-type": "application/octet-stream" } },
    );
  },
});

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const recording: Logger = {
  ...quiet,
  debug(msg, fields) {
    if (msg === "rendering set renditions") renders.push(String(fields?.setId));
  },
};

beforeAll(async () => {
  server = await startServer({
    env: { WORKER_ATTEMPTS: "3", WORKER_BACKOFF_MS: "50", IMPORT_ALLOW_PRIVATE: "true", REDIS_PREFIX: `${testEnv.redisPrefix}-quota-jobs` },
    log: recording,
    processors: (deps) => {
      const real = processorsFor(deps);
      const counted: Processors = { ...real };
      counted["sets.generate"] = {
        ...real["sets.generate"]!,
        run: (job, run) => {
          const { setId } = job.data as JobPayloads["sets.generate"];
          generateRuns.set(setId, (generateRuns.get(setId) ?? 0) + 1);
          return real["sets.generate"]!.run(job, run);
        },
      };
      return counted;
    },
  });
});
afterAll(async () => {
  files.stop(true);
  await (server?.services.queue as BullQueue | undefined)?.obliterate?.().catch(() => {});
  await server?.stop();
});

/** Leaves the organization `room` bytes under its allocation. */
async function allocate(org: TestOrg, room: number) {
  const { db } = server.services.deps;
  const used = await liveUsage(db, org.orgId);
  await db
    .update(orgUsage)
    .set({ allocatedStorage: used!.usedStorage + used!.reservedStorage + room })
    .where(eq(orgUsage.orgId, org.orgId));
}

/** An organization with a picture whose thumbnail is made, and a set cut from it with one 200x200 item. */
async function setOfOne(name: string) {
  const org = await newOrg(server, name);
  const bucket = await newBucket(org, "sets");
  const base = await upload(org.admin, bucket.id, "base.png", await png(400, 400), { contentType: "image/png" });
  await eventually(async () => ((await org.admin.get(`/api/media/${base.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "the base's thumbnail" });
  const setId = (await org.admin.post("/api/sets", { name, baseObjectId: base.id })).body.id as string;
  expect((await org.admin.post(`/api/sets/${setId}/items`, { aspectRatio: "1:1", width: 200, height: 200, role: "square" })).status).toBe(201);
  return { org, setId };
}

async function generateAndSettle(org: TestOrg, setId: string) {
  expect((await org.admin.post(`/api/sets/${setId}/generate`)).status).toBe(202);
  const item = await eventually(
    async () => {
      const set = (await org.admin.get(`/api/sets/${setId}`)).body;
      return set.items[0].renderError ? set.items[0] : undefined;
    },
    { what: "the item to fail" },
  );
  // Retries would come 50 ms and 100 ms later; give them ten times that.
  await Bun.sleep(1500);
  return item;
}

describe("quota refusals inside jobs end the job at once", () => {
  test("a set whose organization has no room left is refused before anything is rendered, in one run", async () => {
    const { org, setId } = await setOfOne("Full");
    await allocate(org, 0);
    const item = await generateAndSettle(org, setId);
    expect(item.renderError).toBe("The renditions do not fit the organization's storage allocation");
    expect(generateRuns.get(setId)).toBe(1);
    expect(renders.filter((id) => id === setId)).toEqual([]);
  });

  test("a rendition larger than the room left is rendered once, refused, and not run again", async () => {
    const { org, setId } = await setOfOne("Nearly full");
    await allocate(org, 10);
    const item = await generateAndSettle(org, setId);
    expect(item.renderError).toBe("The renditions do not fit the organization's storage allocation");
    expect(generateRuns.get(setId)).toBe(1);
    expect(renders.filter((id) => id === setId)).toHaveLength(1);
  });

  test("an import without Content-Length that outgrows the allocation is fetched once and fails as quota_exceeded", async () => {
    const org = await newOrg(server, "Importer");
    const bucket = await newBucket(org, "imports");
    await allocate(org, 1000);
    const before = fetches;
    const res = await org.admin.post("/api/imports", { bucketId: bucket.id, key: "big.bin", url: `http://127.0.0.1:${files.port}/big.bin` });
    expect(res.status).toBe(202);
    const done = await eventually(
      async () => {
        const got = (await org.admin.get(`/api/imports/${res.body.id}`)).body;
        return got.state === "failed" || got.state === "stored" ? got : undefined;
      },
      { what: "the import to settle" },
    );
    await Bun.sleep(1500);
    expect(done.state).toBe("failed");
    expect(done.error.code).toBe("quota_exceeded");
    expect(fetches - before).toBe(1);
    // Nothing was kept: the bytes were deleted and the hold given back.
    expect((await org.admin.get(`/api/media?bucketId=${bucket.id}`)).body.data).toEqual([]);
    expect((await liveUsage(server.services.deps.db, org.orgId))!.reservedStorage).toBe(0);
  });
});
