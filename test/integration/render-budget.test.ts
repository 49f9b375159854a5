import { afterAll, beforeAll, expect, test } from "bun:test";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { pictureWithThumbnail } from "../support/upload.ts";

/**
 * ORG_RENDER_MS_PER_SECOND: uncached on-the-fly renders draw on a per-organization time budget,
 * as searches do (bench neighbours: another organization's p99 under searches and renders
 * together went from 3.9-9.1x its quiet value to 1.4-2.4x). An organization in debt is refused
 * with 429 and Retry-After; its cached renders and other organizations' renders are served.
 * The debt is made inside the server process, with work of a known length: no timing races.
 */
let server: TestServer;
let a: TestOrg;
let b: TestOrg;
const images: Record<string, string> = {};

beforeAll(async () => {
  server = await startServer({ env: { ORG_RENDER_MS_PER_SECOND: "1", ORG_RENDER_BURST_MS: "1", ORG_CONCURRENCY_WAIT_MS: "100" } });
  a = await newOrg(server, "Rendering");
  b = await newOrg(server, "Other");
  for (const [name, org] of [["a", a], ["b", b]] as const) images[name] = await pictureWithThumbnail(org.admin, `pics-${name}`);
}, 60_000);
afterAll(() => server.stop());

test("an organization whose renders overdrew their time is refused with Retry-After; its cached renders and another organization are served", async () => {
  const render = (org: TestOrg, id: string, width: number) => org.admin.get(`/api/media/${id}/render?width=${width}&format=webp`);
  expect((await render(a, images.a!, 32)).status).toBe(200);
  // The render above may have overdrawn the 1 ms already (then this is refused, as it should be);
  // otherwise 200 ms of work charged to A: at 1 ms a second, its next uncached render would wait minutes.
  const slots = server.services.deps.concurrency!.render;
  await slots.run(a.orgId, () => Bun.sleep(200)).catch(() => {});
  expect(slots.budgetLeft(a.orgId)).toBeLessThan(-1);

  const refused = await render(a, images.a!, 40);
  expect(refused.status).toBe(429);
  expect(refused.body.error.code).toBe("rate_limited");
  expect(refused.body.error.message).toContain("renders have used their time");
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  // A render made before needs no decoding: served from the cache.
  expect((await render(a, images.a!, 32)).status).toBe(200);
  // Another organization's budget is its own.
  expect((await render(b, images.b!, 40)).status).toBe(200);
});

test("the budget is on by default, and 0 turns it off", async () => {
  const { loadConfig } = await import("../../app/config.ts");
  expect(loadConfig({}).orgConcurrency.renderBudget).toEqual({ msPerSecond: 500, burstMs: 5000 });
  expect(loadConfig({ ORG_RENDER_MS_PER_SECOND: "0" }).orgConcurrency.renderBudget).toBeNull();
});
