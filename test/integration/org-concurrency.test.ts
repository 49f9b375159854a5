import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OrgConcurrency } from "../../domain/guards/org-concurrency.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { pictureWithThumbnail } from "../support/upload.ts";

/**
 * ORG_MAX_SEARCHES and ORG_MAX_RENDERS (2026 attack run): an organization already running its share of
 * searches or renders waits briefly, then is refused with 429; another organization is served
 * meanwhile. The test takes the organization's slots itself, inside the server process, with
 * work that ends when the test says: no timing races.
 */
const WAIT_MS = 300;
let server: TestServer;
let a: TestOrg;
let b: TestOrg;
const images: Record<string, string> = {};

beforeAll(async () => {
  server = await startServer({ env: { ORG_MAX_SEARCHES: "2", ORG_MAX_RENDERS: "1", ORG_CONCURRENCY_WAIT_MS: String(WAIT_MS) } });
  a = await newOrg(server, "Busy");
  b = await newOrg(server, "Other");
  for (const [name, org] of [["a", a], ["b", b]] as const) images[name] = await pictureWithThumbnail(org.admin, `pics-${name}`);
}, 60_000);
afterAll(() => server.stop());

/** Takes `n` of `orgId`'s slots until the returned function is called. */
function hold(slots: OrgConcurrency, orgId: string, n: number): () => Promise<void> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const held = Array.from({ length: n }, () => slots.run(orgId, () => gate));
  return async () => {
    release();
    await Promise.all(held);
  };
}

describe("per-organization concurrency", () => {
  test("an organization running its searches' share is refused with 429 after a short wait; another organization is served", async () => {
    const slots = server.services.deps.concurrency!.search;
    const release = hold(slots, a.orgId, 2);
    try {
      expect(slots.inFlight(a.orgId)).toBe(2);
      const started = Date.now();
      const refused = await a.admin.get("/api/search?q=photo");
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe("rate_limited");
      expect(refused.body.error.message).toContain("searches");
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS - 20);
      const served = await b.admin.get("/api/search?q=photo");
      expect(served.status).toBe(200);
      expect(served.body.total).toBe(1);
    } finally {
      await release();
    }
    expect((await a.admin.get("/api/search?q=photo")).status).toBe(200);
  });

  test("a search that arrives while the slots are taken runs when one frees within the wait", async () => {
    const slots = server.services.deps.concurrency!.search;
    const release = hold(slots, a.orgId, 2);
    const waiting = a.admin.get("/api/search?q=photo");
    await Bun.sleep(50);
    await release();
    expect((await waiting).status).toBe(200);
    expect(slots.inFlight(a.orgId)).toBe(0);
  });

  test("renders: the same, with their own cap", async () => {
    const slots = server.services.deps.concurrency!.render;
    const release = hold(slots, a.orgId, 1);
    try {
      const refused = await a.admin.get(`/api/media/${images.a}/render?width=33`);
      expect(refused.status).toBe(429);
      expect(refused.body.error.message).toContain("renders");
      const served = await fetch(`${server.url}/api/media/${images.b}/render?width=33`, { headers: { authorization: `Bearer ${b.adminKey.secret}` } });
      expect(served.status).toBe(200);
      // Searches are not renders: the organization can still search.
      expect((await a.admin.get("/api/search?q=photo")).status).toBe(200);
    } finally {
      await release();
    }
    const again = await fetch(`${server.url}/api/media/${images.a}/render?width=33`, { headers: { authorization: `Bearer ${a.adminKey.secret}` } });
    expect(again.status).toBe(200);
  });
});

describe("OrgConcurrency", () => {
  test("waiters are admitted in order; a waiter that times out leaves no slot behind", async () => {
    const c = new OrgConcurrency("things", 1, 100);
    const order: number[] = [];
    let release!: () => void;
    const first = c.run("o", () => new Promise<void>((r) => (release = r)));
    const second = c.run("o", async () => void order.push(2));
    const third = c.run("o", async () => void order.push(3));
    await Bun.sleep(10);
    expect(order).toEqual([]);
    release();
    await Promise.all([first, second, third]);
    expect(order).toEqual([2, 3]);
    expect(c.inFlight("o")).toBe(0);
    const blocker = c.run("o", () => Bun.sleep(300));
    await expect(c.run("o", async () => 1)).rejects.toThrow("Too many things");
    await blocker;
    expect(c.inFlight("o")).toBe(0);
    expect(await c.run("o", async () => 7)).toBe(7);
  });
});
