import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Logger } from "../../domain/ports/log.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * With Redis unreachable the guards let requests through, quickly,
 * never with a 5xx, and say so in the log once per outage rather than once per request.
 * Runs in both modes: these servers bring their own (unreachable or short-lived) Redis.
 */
function recordingLogger() {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (msg: string) => void lines.push({ level, msg });
  const log: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  return { log, lines };
}

const bucketNames = async (api: TestOrg["admin"]) => (await api.get("/api/buckets?limit=200")).body.data.map((b: { name: string }) => b.name) as string[];

describe("Redis pointed at a closed port", () => {
  let server: TestServer;
  let org: TestOrg;
  const { log, lines } = recordingLogger();

  beforeAll(async () => {
    server = await startServer({ log, env: { REDIS_URL: "redis://127.0.0.1:1", RATE_LIMIT_PER_MINUTE: "2" } });
    org = await newOrg(server);
  });
  afterAll(() => server.stop());

  test("the server starts with the Redis stores chosen", () => {
    expect(server.services.backends.guards).toBe("redis");
  });

  test("requests succeed, quickly, and the limit is not enforced", async () => {
    const started = performance.now();
    for (let i = 0; i < 10; i++) {
      const res = await org.admin.get("/api/me");
      expect(res.status).toBe(200);
      // The policy is still announced; a remaining count would be a guess, so none is sent.
      expect(res.headers.get("ratelimit-policy")).toBe('"default";q=2;w=60');
      expect(res.headers.get("ratelimit")).toBeNull();
    }
    expect(performance.now() - started).toBeLessThan(2000);
  });

  test("Idempotency-Key requests run without idempotency", async () => {
    const a = await org.admin.post("/api/buckets", { name: "open-1" }, { "idempotency-key": "k" });
    const b = await org.admin.post("/api/buckets", { name: "open-2" }, { "idempotency-key": "k" });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get("idempotency-replayed")).toBeNull();
    expect(await bucketNames(org.admin)).toEqual(expect.arrayContaining(["open-1", "open-2"]));
  });

  test("refused credentials are still answered 401, not 5xx", async () => {
    for (let i = 0; i < 5; i++) expect((await server.api.withToken("e".repeat(64)).get("/api/me")).status).toBe(401);
  });

  test("the outage is logged once per store, not per request", () => {
    const warnings = lines.filter((l) => l.level === "warn").map((l) => l.msg);
    expect(warnings.filter((m) => m.startsWith("rate limit store unreachable"))).toHaveLength(1);
    expect(warnings.filter((m) => m.startsWith("idempotency store unreachable"))).toHaveLength(1);
    expect(warnings.filter((m) => m.startsWith("redis unreachable"))).toHaveLength(1);
    expect(lines.filter((l) => l.level === "error")).toEqual([]);
  });
});

const redisServer = Bun.which("redis-server");

describe.skipIf(!redisServer)("Redis stopped and started again", () => {
  let server: TestServer;
  let org: TestOrg;
  let port: number;
  let redis: ReturnType<typeof Bun.spawn> | null = null;
  const { log, lines } = recordingLogger();

  async function startRedis() {
    redis = Bun.spawn([redisServer!, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdout: "ignore", stderr: "ignore" });
    for (let i = 0; i < 50; i++) {
      try {
        await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then((s) => s.end());
        return;
      } catch {
        await Bun.sleep(50);
      }
    }
    throw new Error("redis-server did not start");
  }
  async function stopRedis() {
    redis?.kill();
    await redis?.exited;
    redis = null;
  }

  beforeAll(async () => {
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    port = probe.port!;
    probe.stop(true);
    await startRedis();
    server = await startServer({ log, env: { REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_PER_MINUTE: "1000" } });
    org = await newOrg(server);
  });
  afterAll(async () => {
    await server.stop();
    await stopRedis();
  });

  test("guards work, fail open while Redis is down, and work again once it is back", async () => {
    const first = await org.admin.post("/api/buckets", { name: "before" }, { "idempotency-key": "b" });
    expect((await org.admin.post("/api/buckets", { name: "before" }, { "idempotency-key": "b" })).headers.get("idempotency-replayed")).toBe("true");
    expect(first.headers.get("ratelimit")).toMatch(/r=\d+/);

    await stopRedis();
    const started = performance.now();
    for (let i = 0; i < 5; i++) {
      const res = await org.admin.post("/api/buckets", { name: `during-${i}` }, { "idempotency-key": "d" });
      expect(res.status).toBe(201);
      expect(res.headers.get("ratelimit")).toBeNull();
    }
    expect(performance.now() - started).toBeLessThan(2000);

    await startRedis();
    // ioredis reconnects with backoff (at most 2 s between attempts).
    let back = false;
    for (let i = 0; i < 60 && !back; i++) {
      await Bun.sleep(100);
      back = server.services.redis?.client.status === "ready";
    }
    expect(back).toBe(true);
    const after = await org.admin.post("/api/buckets", { name: "after" }, { "idempotency-key": "a" });
    expect(after.headers.get("ratelimit")).toMatch(/r=\d+/);
    expect((await org.admin.post("/api/buckets", { name: "after" }, { "idempotency-key": "a" })).headers.get("idempotency-replayed")).toBe("true");

    const msgs = lines.map((l) => `${l.level} ${l.msg}`);
    expect(msgs.filter((m) => m.startsWith("warn rate limit store unreachable"))).toHaveLength(1);
    expect(msgs.filter((m) => m.startsWith("info rate limit store reachable again"))).toHaveLength(1);
    expect(msgs.filter((m) => m.startsWith("warn idempotency store unreachable"))).toHaveLength(1);
    expect(msgs.filter((m) => m.startsWith("info redis reachable again"))).toHaveLength(1);
  }, 20_000);
});

describe.skipIf(!redisServer)("Redis hung (the process frozen, its connections open)", () => {
  test("a hung Redis: commands give up after 500 ms and requests are served without the guards", async () => {
    const { privateRedis } = await import("../support/faults.ts");
    const redis = await privateRedis();
    const server = await startServer({ env: { REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: "1000" } });
    try {
      const org = await newOrg(server);
      expect((await org.admin.get("/api/me")).headers.get("ratelimit")).toMatch(/r=\d+/);
      // The bound docs/guards.md names: what one command may wait on a Redis that never answers.
      expect(server.services.redis!.client.options.commandTimeout).toBe(500);
      redis.freeze();
      for (let i = 0; i < 3; i++) {
        const res = await org.admin.post("/api/buckets", { name: `hung-${i}` }, { "idempotency-key": "hung" });
        expect(res.status).toBe(201);
        expect(res.headers.get("ratelimit")).toBeNull();
      }
      // Without idempotency each keyed request ran.
      expect((await bucketNames(org.admin)).filter((n) => n.startsWith("hung-"))).toHaveLength(3);
    } finally {
      redis.thaw();
      await server.stop();
      await redis.destroy();
    }
  }, 60_000);
});
