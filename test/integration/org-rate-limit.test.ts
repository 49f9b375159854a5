import { afterAll, beforeAll, expect, test } from "bun:test";
import { ManualClock } from "../../domain/core/clock.ts";
import { testEnv } from "../support/env.ts";
import { newOrg, startServer, type TestServer } from "../support/server.ts";

/**
 * ORG_RATE_LIMIT_PER_MINUTE: one organization's credentials together, above each credential's
 * own limit (2026 attack run: an admin minting 25 keys sent 6,000 requests in 77 s). On the run's
 * store (Redis or in-process), with a manual clock so nothing depends on timing.
 */
const PER_KEY = 5;
const PER_ORG = 8;
const clock = new ManualClock();
let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    clock,
    env: {
      RATE_LIMIT_PER_MINUTE: String(PER_KEY),
      ORG_RATE_LIMIT_PER_MINUTE: String(PER_ORG),
      REDIS_PREFIX: `${testEnv.redisPrefix}-orl-${crypto.randomUUID()}`,
    },
  });
});
afterAll(() => server.stop());

test("an organization over its cap is refused on every key, REST and MCP, while another organization is served", async () => {
  const a = await newOrg(server, "Noisy");
  const b = await newOrg(server, "Quiet");
  const keys = [await a.keyClient(["read", "write"]), await a.keyClient(["read"]), await a.keyClient(["read"])] as const;
  const other = await b.keyClient(["read"]);
  clock.advance(60_000);

  // Each key stays within its own limit; together they pass the organization's.
  for (let i = 0; i < PER_KEY; i++) expect((await keys[0].get("/api/me")).status).toBe(200);
  for (let i = 0; i < PER_ORG - PER_KEY; i++) expect((await keys[1].get("/api/me")).status).toBe(200);
  const refused = await keys[1].get("/api/me");
  expect(refused.status).toBe(429);
  expect(refused.body.error.code).toBe("rate_limited");
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(refused.headers.get("ratelimit-policy")).toBe(`"default";q=${PER_KEY};w=60, "organization";q=${PER_ORG};w=60`);
  expect(refused.headers.get("ratelimit")).toMatch(/^"organization";r=0;t=\d+$/);

  // A fresh key of the same organization is refused too; so is its MCP endpoint.
  expect((await keys[2].get("/api/buckets")).status).toBe(429);
  const mcp = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${keys[2].secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  expect(mcp.status).toBe(429);

  // The other organization is served, and an allowed request shows only its credential's policy.
  const served = await other.get("/api/buckets");
  expect(served.status).toBe(200);
  expect(served.headers.get("ratelimit-policy")).toBe(`"default";q=${PER_KEY};w=60`);
  expect(served.headers.get("ratelimit")).toMatch(/^"default";r=4;/);

  // Units come back at the organization's rate.
  clock.advance(60_000 / PER_ORG + 1);
  expect((await keys[2].get("/api/me")).status).toBe(200);
});

test("a keyed request the organization refuses leaves its Idempotency-Key unclaimed: the retry runs", async () => {
  const a = await newOrg(server, "Retrying");
  const keys = [await a.keyClient(["read", "write"]), await a.keyClient(["read", "write"])] as const;
  clock.advance(60_000);
  for (let i = 0; i < PER_KEY; i++) await keys[0].get("/api/me");
  for (let i = 0; i < PER_ORG - PER_KEY; i++) await keys[1].get("/api/me");
  const refused = await keys[1].post("/api/buckets", { name: "after-the-cap" }, { "idempotency-key": "cap-1" });
  expect(refused.status).toBe(429);
  clock.advance(60_000);
  const retried = await keys[1].post("/api/buckets", { name: "after-the-cap" }, { "idempotency-key": "cap-1" });
  expect(retried.status).toBe(201);
});

test("ORG_RATE_LIMIT_PER_MINUTE defaults to four times RATE_LIMIT_PER_MINUTE", async () => {
  const { loadConfig } = await import("../../app/config.ts");
  expect(loadConfig({}).orgRateLimitPerMinute).toBe(1200);
  expect(loadConfig({ RATE_LIMIT_PER_MINUTE: "50" }).orgRateLimitPerMinute).toBe(200);
  expect(loadConfig({ RATE_LIMIT_PER_MINUTE: "50", ORG_RATE_LIMIT_PER_MINUTE: "70" }).orgRateLimitPerMinute).toBe(70);
});
