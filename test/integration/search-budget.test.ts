import { afterAll, beforeAll, expect, test } from "bun:test";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * ORG_SEARCH_MS_PER_SECOND: searches draw on a per-organization time budget (on by default; the
 * test servers turn it off, since a loaded machine stretches every search's wall time). An
 * organization in debt is refused with 429 and Retry-After; another organization is served.
 * The debt is made inside the server process, with work of a known length: no timing races.
 */
let server: TestServer;
let a: TestOrg;
let b: TestOrg;

beforeAll(async () => {
  server = await startServer({ env: { ORG_SEARCH_MS_PER_SECOND: "1", ORG_SEARCH_BURST_MS: "1", ORG_CONCURRENCY_WAIT_MS: "100" } });
  a = await newOrg(server, "Searching");
  b = await newOrg(server, "Other");
}, 60_000);
afterAll(() => server.stop());

test("an organization whose searches overdrew their time is refused with Retry-After; another organization is served", async () => {
  const slots = server.services.deps.concurrency!.search;
  await slots.run(a.orgId, () => Bun.sleep(200)).catch(() => {});
  expect(slots.budgetLeft(a.orgId)).toBeLessThan(-1);

  const refused = await a.admin.get("/api/search?q=photo");
  expect(refused.status).toBe(429);
  expect(refused.body.error.code).toBe("rate_limited");
  expect(refused.body.error.message).toContain("searches have used their time");
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect((await b.admin.get("/api/search?q=photo")).status).toBe(200);
});

test("the budget is on by default, and 0 turns it off", async () => {
  const { loadConfig } = await import("../../app/config.ts");
  expect(loadConfig({}).orgConcurrency.searchBudget).toEqual({ msPerSecond: 250, burstMs: 2500 });
  expect(loadConfig({ ORG_SEARCH_MS_PER_SECOND: "0" }).orgConcurrency.searchBudget).toBeNull();
});
