import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { MemoryCredentialCache } from "../../app/credential-cache.ts";
import { testEnv } from "../support/env.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * API keys are remembered after their first lookup (bench/guards.ts: the lookup was most of
 * what the guards cost). Whatever ends a key must end it at once, on every instance.
 */
const cacheOf = (s: TestServer) => s.services.deps.credentials as MemoryCredentialCache;

async function statusWithin(ms: number, call: () => Promise<{ status: number }>, wanted: number): Promise<number> {
  const until = performance.now() + ms;
  let status = (await call()).status;
  while (status !== wanted && performance.now() < until) {
    await Bun.sleep(5);
    status = (await call()).status;
  }
  return status;
}

describe("on one instance", () => {
  let server: TestServer;
  let org: TestOrg;
  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server);
  });
  afterAll(() => server.stop());

  test("a key is looked up once, then served from memory", async () => {
    const key = await org.keyClient(["read"]);
    const before = cacheOf(server).size;
    await key.get("/api/me");
    expect(cacheOf(server).size).toBe(before + 1);
  });

  test("rotation, deletion and the deletion of its bucket end a remembered key at once", async () => {
    const rotated = await org.keyClient(["read"]);
    const deleted = await org.keyClient(["read"]);
    const bucket = (await org.admin.post("/api/buckets", { name: "dies-with-keys" })).body;
    const restricted = await org.keyClient(["read"], { bucketId: bucket.id });
    for (const k of [rotated, deleted, restricted]) expect((await k.get("/api/me")).status).toBe(200);
    await org.admin.put(`/api/api-keys/${rotated.keyId}/rotate`);
    await org.admin.delete(`/api/api-keys/${deleted.keyId}`);
    expect((await org.admin.delete(`/api/buckets/${bucket.id}`)).status).toBe(200);
    for (const k of [rotated, deleted, restricted]) expect((await k.get("/api/me")).status).toBe(401);
  });
});

const shared = testEnv.mode === "services" && testEnv.redisUrl !== null;
const title = shared ? "across instances sharing Redis" : "across instances: SKIPPED, this run has no Redis (npm test with Redis reachable covers it)";

describe.skipIf(!shared)(title, () => {
  let a: TestServer;
  let b: TestServer;
  let org: TestOrg;
  beforeAll(async () => {
    [a, b] = await Promise.all([startServer(), startServer()]);
    org = await newOrg(a);
  });
  afterAll(() => Promise.all([a?.stop(), b?.stop()]));

  test("a key rotated, deleted or bucket-deleted on one instance stops working on the other at once", async () => {
    const rotated = await org.keyClient(["read"]);
    const deleted = await org.keyClient(["read"]);
    const bucket = (await org.admin.post("/api/buckets", { name: "shared-dies" })).body;
    const restricted = await org.keyClient(["read"], { bucketId: bucket.id });
    const onB = [rotated, deleted, restricted].map((k) => b.api.withToken(k.secret));
    // Remembered on B.
    const before = cacheOf(b).size;
    for (const k of onB) expect((await k.get("/api/me")).status).toBe(200);
    expect(cacheOf(b).size).toBe(before + 3);
    await org.admin.put(`/api/api-keys/${rotated.keyId}/rotate`);
    await org.admin.delete(`/api/api-keys/${deleted.keyId}`);
    await org.admin.delete(`/api/buckets/${bucket.id}`);
    // The message is on its way before A answers; B may still be reading it when the next
    // request lands, so allow it the delivery time (the 10 s cache lifetime is far beyond this).
    for (const k of onB) expect(await statusWithin(200, () => k.get("/api/me"), 401)).toBe(401);
  });
});

describe("while invalidations cannot be received", () => {
  test("with Redis unreachable the cache is bypassed: every request reads the database", async () => {
    const server = await startServer({ env: { REDIS_URL: "redis://127.0.0.1:1" } });
    try {
      const org = await newOrg(server);
      for (let i = 0; i < 3; i++) expect((await org.admin.get("/api/me")).status).toBe(200);
      expect(cacheOf(server).size).toBe(0);
    } finally {
      await server.stop();
    }
  });
});
