import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../domain/core/clock.ts";
import { testEnv } from "../support/env.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/** Two instances on one Redis (and one PostgreSQL) behave as one service. */
const shared = testEnv.mode === "services" && testEnv.redisUrl !== null;
const LIMIT = 30;

const title = shared ? "two instances sharing Redis" : "two instances sharing Redis: SKIPPED, this run has no Redis (npm test with Redis reachable covers it)";

describe.skipIf(!shared)(title, () => {
  let a: TestServer;
  let b: TestServer;
  let org: TestOrg;

  beforeAll(async () => {
    const env = { RATE_LIMIT_PER_MINUTE: String(LIMIT), REDIS_PREFIX: `${testEnv.redisPrefix}-shared-${crypto.randomUUID()}` };
    // One clock for both, so the count does not depend on how fast this machine is.
    const clock = new ManualClock();
    [a, b] = await Promise.all([startServer({ env, clock }), startServer({ env, clock })]);
    org = await newOrg(a);
  });
  afterAll(() => Promise.all([a?.stop(), b?.stop()]));

  test("they share one limit per credential", async () => {
    const key = await org.keyClient(["read"]);
    const onA = key;
    const onB = b.api.withToken(key.secret);
    const statuses = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await (i % 2 === 0 ? onA : onB).get("/api/me")).status);
    expect(statuses).toEqual(Array(LIMIT).fill(200));
    const refusedOnA = await onA.get("/api/me");
    const refusedOnB = await onB.get("/api/me");
    expect([refusedOnA.status, refusedOnB.status]).toEqual([429, 429]);
    expect(refusedOnB.headers.get("ratelimit")).toBe('"default";r=0;t=60');
  });

  test("a response stored by one is replayed by the other", async () => {
    const onB = b.api.withToken(org.adminKey.secret);
    const first = await org.admin.post("/api/buckets", { name: "from-a" }, { "idempotency-key": "shared" });
    expect(first.status).toBe(201);
    const again = await onB.post("/api/buckets", { name: "from-a" }, { "idempotency-key": "shared" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const names = (await onB.get("/api/buckets?limit=200")).body.data.map((x: { name: string }) => x.name);
    expect(names.filter((n: string) => n === "from-a")).toHaveLength(1);
  });

  test("concurrent requests with one key across both create one bucket", async () => {
    const onB = b.api.withToken(org.adminKey.secret);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? onB : org.admin).post("/api/buckets", { name: `x-${i}` }, { "idempotency-key": "race" })),
    );
    for (const r of results) expect([201, 409]).toContain(r.status);
    const names = (await org.admin.get("/api/buckets?limit=200")).body.data.map((x: { name: string }) => x.name);
    expect(names.filter((n: string) => n.startsWith("x-"))).toHaveLength(1);
  });
});
