import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../domain/core/clock.ts";
import type { ApiResponse } from "../support/http.ts";
import { testEnv } from "../support/env.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * RATE_LIMIT_PER_MINUTE per credential, over real HTTP, on the run's store. A limit of 5 per
 * minute makes a unit come back every 12 s of the manual clock, so nothing depends on timing.
 */
const LIMIT = 5;
const clock = new ManualClock();
let server: TestServer;
let org: TestOrg;

beforeAll(async () => {
  server = await startServer({
    clock,
    // Own key space: the per-address bucket must not carry other suites' requests.
    env: { RATE_LIMIT_PER_MINUTE: String(LIMIT), REDIS_PREFIX: `${testEnv.redisPrefix}-rl-${crypto.randomUUID()}` },
  });
  org = await newOrg(server);
});
afterAll(() => server.stop());

/** A fresh key whose bucket is full (creating it costs the owner one unit, so the clock moves on a window). */
async function freshKey() {
  const k = await org.keyClient(["read", "write"]);
  clock.advance(60_000);
  return k;
}

function expectHeaders(res: ApiResponse, remaining: number, reset: number) {
  expect(res.headers.get("ratelimit-policy")).toBe(`"default";q=${LIMIT};w=60`);
  expect(res.headers.get("ratelimit")).toBe(`"default";r=${remaining};t=${reset}`);
}

function expect429(res: ApiResponse, retryAfter: number, reset = 60) {
  expect(res.status).toBe(429);
  expect(res.body.error.code).toBe("rate_limited");
  expect(res.body.error.requestId).toBe(res.headers.get("x-request-id"));
  expect(res.headers.get("retry-after")).toBe(String(retryAfter));
  expectHeaders(res, 0, reset);
}

describe("per credential", () => {
  test(`the first ${LIMIT} requests pass, counting down; the next is 429 with Retry-After`, async () => {
    const key = await freshKey();
    for (let i = 0; i < LIMIT; i++) {
      const res = await key.get("/api/me");
      expect(res.status).toBe(200);
      // t: seconds until the quota is whole again, 12 s per unit spent
      expectHeaders(res, LIMIT - 1 - i, 12 * (i + 1));
    }
    expect429(await key.get("/api/me"), 12);
    // Refusals do not push the client further back.
    expect429(await key.get("/api/me"), 12);
  });

  test("a second key is unaffected", async () => {
    const a = await freshKey();
    const b = await freshKey();
    for (let i = 0; i < LIMIT; i++) await a.get("/api/me");
    expect((await a.get("/api/me")).status).toBe(429);
    const res = await b.get("/api/me");
    expect(res.status).toBe(200);
    expectHeaders(res, LIMIT - 1, 12);
  });

  test("units come back one per window/limit", async () => {
    const key = await freshKey();
    for (let i = 0; i < LIMIT; i++) await key.get("/api/me");
    clock.advance(11_000);
    expect429(await key.get("/api/me"), 1, 49);
    clock.advance(1_000);
    const res = await key.get("/api/me");
    expect(res.status).toBe(200);
    expectHeaders(res, 0, 60);
  });

  test("errors count and carry the fields too; POST, DELETE and GET share one bucket", async () => {
    const key = await freshKey();
    const statuses = [
      (await key.get(`/api/buckets/${crypto.randomUUID()}`)).status,
      (await key.post("/api/buckets", { name: "bad name!" })).status,
      (await key.delete(`/api/buckets/${crypto.randomUUID()}`)).status,
      (await key.get("/api/buckets")).status,
    ];
    expect(statuses).toEqual([404, 400, 403, 200]);
    const last = await key.post("/api/buckets", { name: "last-one" });
    expect(last.status).toBe(201);
    expectHeaders(last, 0, 60);
    expect429(await key.post("/api/buckets", { name: "one-too-many" }), 12);
    clock.advance(60_000);
    const names = (await key.get("/api/buckets?limit=200")).body.data.map((b: { name: string }) => b.name);
    expect(names).not.toContain("one-too-many");
  });

  test("replays count: every request is a request", async () => {
    const key = await freshKey();
    for (let i = 0; i < LIMIT; i++) {
      const res = await key.post("/api/buckets", { name: "replay-counted" }, { "idempotency-key": "rc" });
      expect(res.status).toBe(201);
    }
    expect429(await key.post("/api/buckets", { name: "replay-counted" }, { "idempotency-key": "rc" }), 12);
  });

  test("a JWT user has one bucket, shared by the user's tokens", async () => {
    clock.advance(60_000);
    for (let i = 0; i < LIMIT; i++) expect((await org.owner.get("/api/me")).status).toBe(200);
    expect429(await org.owner.get("/api/me"), 12);
    clock.advance(60_000);
  });

  test(`${LIMIT * 4} concurrent requests: exactly ${LIMIT} pass`, async () => {
    const key = await freshKey();
    const results = await Promise.all(Array.from({ length: LIMIT * 4 }, () => key.get("/api/me")));
    expect(results.filter((r) => r.status === 200)).toHaveLength(LIMIT);
    expect(results.filter((r) => r.status === 429)).toHaveLength(LIMIT * 3);
    const remaining = results.filter((r) => r.status === 200).map((r) => r.headers.get("ratelimit")!.match(/r=(\d+)/)![1]);
    expect(remaining.sort()).toEqual(["0", "1", "2", "3", "4"]);
  });
});

describe("MCP", () => {
  const mcp = (secret: string, id: number) =>
    fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list" }),
    });

  test("every POST to /mcp counts against the credential's bucket, shared with REST", async () => {
    const key = await freshKey();
    await key.get("/api/me");
    await key.get("/api/me");
    for (let i = 1; i <= LIMIT - 2; i++) {
      const res = await mcp(key.secret, i);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit")).toBe(`"default";r=${LIMIT - 2 - i};t=${12 * (i + 2)}`);
    }
    const refused = await mcp(key.secret, 99);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("12");
    expect((await refused.json()).error.code).toBe("rate_limited");
    expect((await key.get("/api/me")).status).toBe(429);
  });
});

describe("MCP batches", () => {
  test("a JSON-RPC batch is refused whole with 400 and -32600; none of its calls runs", async () => {
    const key = await freshKey();
    const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "buckets_create", arguments: { name: `batched-${id}` } } });
    const res = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify([call(1), call(2), call(3)]),
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toContain("batch");
    const names = (await key.get("/api/buckets?limit=200")).body.data.map((b: { name: string }) => b.name);
    expect(names.filter((n: string) => n.startsWith("batched-"))).toEqual([]);
  });
});

describe("per client address, without a valid credential", () => {
  test("refused credentials are limited per address; valid credentials from it are not", async () => {
    clock.advance(60_000);
    const key = await freshKey();
    const bad = server.api.withToken("f".repeat(64));
    for (let i = 0; i < LIMIT; i++) {
      const res = await bad.get("/api/me");
      expect(res.status).toBe(401);
      expectHeaders(res, LIMIT - 1 - i, 12 * (i + 1));
    }
    expect429(await bad.get("/api/me"), 12);
    expect429(await server.api.get("/api/buckets"), 12);
    // The address bucket also covers the routes that take no credential...
    expect429(await server.api.get("/api/openapi.json"), 12);
    expect429(await server.api.get("/api/no-such-route"), 12);
    const mcpRes = await fetch(`${server.url}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(mcpRes.status).toBe(429);
    // ...but not health checks, and not a valid credential from the same address.
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get("ratelimit")).toBeNull();
    expect((await key.get("/api/me")).status).toBe(200);
    clock.advance(60_000);
    const again = await bad.get("/api/me");
    expect(again.status).toBe(401);
    expectHeaders(again, LIMIT - 1, 12);
  });

  test("public routes carry the fields on success", async () => {
    clock.advance(60_000);
    const doc = await server.api.get("/api/openapi.json");
    expect(doc.status).toBe(200);
    expectHeaders(doc, LIMIT - 1, 12);
    const missing = await server.api.get("/api/no-such-route");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    expectHeaders(missing, LIMIT - 2, 24);
    clock.advance(60_000);
  });
});

describe("configuration", () => {
  test("RATE_LIMIT_PER_MINUTE defaults to 300", async () => {
    const { loadConfig } = await import("../../app/config.ts");
    expect(loadConfig({}).rateLimitPerMinute).toBe(300);
  });
});
