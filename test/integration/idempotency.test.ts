import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { ManualClock } from "../../domain/core/clock.ts";
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_RETENTION_MS } from "../../domain/guards/idempotency.ts";
import { errorResponse } from "../../http/respond.ts";
import { compose, type HttpContext } from "../../http/pipeline.ts";
import { idempotency } from "../../http/guards/idempotency.ts";
import { FailOpen } from "../../http/guards/fail-open.ts";
import type { Api } from "../support/http.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { testEnv } from "../support/env.ts";

/**
 * The Idempotency-Key rules of docs/guards.md, one by one, over real HTTP, on the run's store: Redis when the run has it
 * (every instance shares it), in-process otherwise.
 */
let server: TestServer;
let org: TestOrg;
let other: TestOrg;

beforeAll(async () => {
  server = await startServer({
    extraRoutes: (app) => {
      // Stands in for the payment webhook: a non-tool route added through extraRoutes.
      let calls = 0;
      app.post("/api/payments/webhook", () => Response.json({ calls: ++calls }));
    },
  });
  org = await newOrg(server);
  other = await newOrg(server, "Other org");
});
afterAll(() => server.stop());

const key = () => `idem-${crypto.randomUUID()}`;
const withKey = (k: string) => ({ "idempotency-key": k });

async function bucketNames(api: Api): Promise<string[]> {
  return (await api.get("/api/buckets?limit=200")).body.data.map((b: { name: string }) => b.name);
}

describe("which requests take part", () => {
  test("the store in use is the run's: Redis when configured, in-process otherwise", () => {
    expect(server.services.backends.guards).toBe(testEnv.mode === "services" && testEnv.redisUrl ? "redis" : "memory");
  });

  test("requests without the header are unaffected: each one runs", async () => {
    const a = await org.admin.post("/api/buckets", { name: "plain-1" });
    const b = await org.admin.post("/api/buckets", { name: "plain-1" });
    expect(a.status).toBe(201);
    expect(b.status).toBe(409);
    expect(a.headers.get("idempotency-replayed")).toBeNull();
  });

  test("GET ignores the header: the second GET sees the state it finds", async () => {
    const k = key();
    const first = await org.admin.get("/api/buckets?limit=200", withKey(k));
    await org.admin.post("/api/buckets", { name: "seen-by-get" });
    const second = await org.admin.get("/api/buckets?limit=200", withKey(k));
    expect(second.headers.get("idempotency-replayed")).toBeNull();
    expect(second.body.total).toBe(first.body.total + 1);
  });

  test("POST takes part", async () => {
    const k = key();
    const first = await org.admin.post("/api/buckets", { name: "post-once" }, withKey(k));
    const again = await org.admin.post("/api/buckets", { name: "post-once" }, withKey(k));
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
  });

  test("PUT takes part: a retried rotation returns the same secret and rotates once", async () => {
    const created = (await org.admin.post("/api/api-keys", { name: "rot" })).body;
    const k = key();
    const first = await org.admin.put(`/api/api-keys/${created.id}/rotate`, {}, withKey(k));
    const again = await org.admin.put(`/api/api-keys/${created.id}/rotate`, {}, withKey(k));
    expect(first.status).toBe(200);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.body.secret).toBe(first.body.secret);
    // Had the retry run, this secret would have been rotated out.
    expect((await server.api.withToken(first.body.secret).get("/api/me")).status).toBe(200);
  });

  test("DELETE takes part: the retry answers the original 200, not 404", async () => {
    const b = (await org.admin.post("/api/buckets", { name: "del-once" })).body;
    const k = key();
    const first = await org.admin.delete(`/api/buckets/${b.id}`, withKey(k));
    const again = await org.admin.delete(`/api/buckets/${b.id}`, withKey(k));
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: b.id, deleted: true });
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect((await org.admin.delete(`/api/buckets/${b.id}`)).status).toBe(404);
  });
  // PATCH is in the rule (IDEMPOTENT_METHODS) but no tool uses it yet.
});

describe("the first request runs and its 2xx response is replayed", () => {
  test("POST /api/buckets: same status and body, idempotency-replayed: true, one bucket", async () => {
    const k = key();
    const first = await org.admin.post("/api/buckets", { name: "replayed" }, withKey(k));
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotency-replayed")).toBeNull();
    const again = await org.admin.post("/api/buckets", { name: "replayed" }, withKey(k));
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect((await bucketNames(org.admin)).filter((n) => n === "replayed")).toHaveLength(1);
  });

  test("POST /api/api-keys: the replay returns the same key and secret, once created", async () => {
    const k = key();
    const first = await org.admin.post("/api/api-keys", { name: "retried" }, withKey(k));
    const again = await org.admin.post("/api/api-keys", { name: "retried" }, withKey(k));
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const keys = (await org.admin.get("/api/api-keys?limit=200")).body.data;
    expect(keys.filter((x: { id: string }) => x.id === first.body.id)).toHaveLength(1);
    expect(keys.filter((x: { name: string }) => x.name === "retried")).toHaveLength(1);
  });

  test("a replay has its own X-Request-Id and fresh rate limit fields", async () => {
    const k = key();
    const first = await org.admin.post("/api/buckets", { name: "fresh-headers" }, withKey(k));
    const again = await org.admin.post("/api/buckets", { name: "fresh-headers" }, withKey(k));
    expect(again.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(again.headers.get("ratelimit-policy")).toBe('"default";q=100000;w=60');
    expect(again.headers.get("ratelimit")).toMatch(/^"default";r=\d+;t=\d+$/);
  });

  test("a non-2xx answer is not stored and gives the key up: the retry runs", async () => {
    const k = key();
    const bad = await org.admin.post("/api/buckets", { name: "bad name!" }, withKey(k));
    expect(bad.status).toBe(400);
    const good = await org.admin.post("/api/buckets", { name: "after-400" }, withKey(k));
    expect(good.status).toBe(201);
    expect(good.headers.get("idempotency-replayed")).toBeNull();

    await org.admin.post("/api/buckets", { name: "taken" });
    const k2 = key();
    expect((await org.admin.post("/api/buckets", { name: "taken" }, withKey(k2))).status).toBe(409);
    const retry = await org.admin.post("/api/buckets", { name: "not-taken" }, withKey(k2));
    expect(retry.status).toBe(201);
    expect(retry.body.name).toBe("not-taken");
  });

  test("an empty or over-long key is a 400", async () => {
    for (const v of [" ", "x".repeat(256)]) {
      const res = await org.admin.post("/api/buckets", { name: "never" }, withKey(v));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("bad_request");
    }
    expect(await bucketNames(org.admin)).not.toContain("never");
  });
});

describe("a different caller, organization or URL is a distinct request", () => {
  test("another API key of the same organization", async () => {
    const k = key();
    const writer = await org.keyClient(["write", "read"]);
    expect((await org.admin.post("/api/buckets", { name: "caller-a" }, withKey(k))).status).toBe(201);
    const res = await writer.post("/api/buckets", { name: "caller-b" }, withKey(k));
    expect(res.status).toBe(201);
    expect(res.headers.get("idempotency-replayed")).toBeNull();
    expect(res.body.name).toBe("caller-b");
  });

  test("the same user with a JWT instead of an API key", async () => {
    const k = key();
    expect((await org.admin.post("/api/buckets", { name: "as-key" }, withKey(k))).status).toBe(201);
    const res = await org.owner.post("/api/buckets", { name: "as-jwt" }, withKey(k));
    expect(res.headers.get("idempotency-replayed")).toBeNull();
    expect(res.body.name).toBe("as-jwt");
  });

  test("another organization", async () => {
    const k = key();
    const mine = await org.admin.post("/api/buckets", { name: "org-scoped" }, withKey(k));
    const theirs = await other.admin.post("/api/buckets", { name: "org-scoped" }, withKey(k));
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotency-replayed")).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await bucketNames(other.admin)).toContain("org-scoped");
  });

  test("another URL, down to the query string", async () => {
    const k = key();
    const a = await org.admin.post("/api/buckets?attempt=1", { name: "url-1" }, withKey(k));
    const b = await org.admin.post("/api/buckets?attempt=2", { name: "url-2" }, withKey(k));
    const c = await org.admin.post("/api/buckets?attempt=1", { name: "url-3" }, withKey(k));
    expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
    expect(b.headers.get("idempotency-replayed")).toBeNull();
    expect(c.headers.get("idempotency-replayed")).toBe("true");
    expect(c.body.id).toBe(a.body.id);
    expect(await bucketNames(org.admin)).not.toContain("url-3");
  });
  // Method: no path has two mutating methods yet; the unit tests cover it in the replay key.
});

describe("a different body with the same key, method and URL", () => {
  test("returns the original stored response and changes nothing", async () => {
    const k = key();
    const first = await org.admin.post("/api/buckets", { name: "body-original" }, withKey(k));
    const changed = await org.admin.post("/api/buckets", { name: "body-changed" }, withKey(k));
    expect(changed.status).toBe(201);
    expect(changed.body).toEqual(first.body);
    expect(changed.headers.get("idempotency-replayed")).toBe("true");
    expect(await bucketNames(org.admin)).not.toContain("body-changed");
  });
});

describe("the payment webhook never takes part", () => {
  test("a route added through extraRoutes runs every time, whatever the key", async () => {
    const k = key();
    const call = () => fetch(`${server.url}/api/payments/webhook`, { method: "POST", headers: withKey(k), body: "{}" });
    const a = await call();
    const b = await call();
    expect((await a.json()).calls + 1).toBe((await b.json()).calls);
    expect(b.headers.get("idempotency-replayed")).toBeNull();
    // and it is not behind the API's rate limit either
    expect(b.headers.get("ratelimit")).toBeNull();
  });
});

describe("concurrent requests with one key", () => {
  test("50 at once create exactly one bucket; the others replay it or are told it is in flight", async () => {
    const k = key();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => org.admin.post("/api/buckets", { name: `race-${i}` }, withKey(k))),
    );
    const names = (await bucketNames(org.admin)).filter((n) => n.startsWith("race-"));
    expect(names).toHaveLength(1);
    const originals = results.filter((r) => r.status === 201 && r.headers.get("idempotency-replayed") === null);
    expect(originals).toHaveLength(1);
    for (const r of results) {
      if (r.status === 201) expect(r.body).toEqual(originals[0]!.body);
      else {
        expect(r.status).toBe(409);
        expect(r.body.error.code).toBe("idempotency_in_flight");
        expect(r.headers.get("retry-after")).toBe("1");
      }
    }
    // Once it has finished, every retry replays.
    const after = await org.admin.post("/api/buckets", { name: "race-late" }, withKey(k));
    expect(after.headers.get("idempotency-replayed")).toBe("true");
    expect(after.body).toEqual(originals[0]!.body);
  });

  test.skipIf(testEnv.mode !== "services")("a retry while the first request is held up gets 409 idempotency_in_flight (PostgreSQL)", async () => {
    const k = key();
    let unlock!: () => void;
    const locked = new Promise<void>((r) => (unlock = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    // A second connection holds the buckets table, so the first request waits inside the tool.
    const blocker = server.services.deps.db.transaction(async (tx) => {
      await tx.execute(sql`lock table buckets in exclusive mode`);
      holding();
      await locked;
    });
    await held;
    const first = org.admin.post("/api/buckets", { name: "held-up" }, withKey(k));
    // Wait until the first request is inside the tool, blocked on the lock (so it holds the key).
    for (let waiting = 0; waiting === 0; ) {
      // postgres.js: execute() answers the rows as an array.
      const [row] = (await server.services.deps.db.execute(
        sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      )) as unknown as { n: number }[];
      waiting = row?.n ?? 0;
      if (waiting === 0) await Bun.sleep(10);
    }
    const retry = await org.admin.post("/api/buckets", { name: "held-up" }, withKey(k));
    expect(retry.status).toBe(409);
    expect(retry.body.error).toMatchObject({ code: "idempotency_in_flight", requestId: retry.headers.get("x-request-id") });
    unlock();
    await blocker;
    expect((await first).status).toBe(201);
    const replayed = await org.admin.post("/api/buckets", { name: "held-up" }, withKey(k));
    expect(replayed.headers.get("idempotency-replayed")).toBe("true");
  });
});

describe("the guard on the run's store, driven directly", () => {
  const caller = { orgId: "o", userId: "u", apiKeyId: "k", scopes: new Set(["admin"] as const), bucketId: null, principal: "key:k" };
  const ctx = (k: string): HttpContext => {
    const request = new Request("http://localhost/api/x", { method: "POST", headers: withKey(k) });
    return { request, url: new URL(request.url), requestId: crypto.randomUUID(), caller, clientAddress: null, responseHeaders: new Headers() };
  };

  test("in flight until the first finishes; a thrown error releases the key", async () => {
    const { deps, guardStores } = server.services;
    const guard = idempotency(guardStores.idempotency, deps.clock, deps.log, new FailOpen(deps.log, "idempotency"));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let runs = 0;
    const handler = compose([guard], async () => {
      runs++;
      started();
      await gate;
      return Response.json({ run: runs }, { status: 201 });
    });
    const asResponse = (c: HttpContext) =>
      handler(c).catch((err) => errorResponse(err, c.requestId));
    const k = key();
    const first = asResponse(ctx(k));
    await running;
    const second = await asResponse(ctx(k));
    expect(second.status).toBe(409);
    expect((await second.json()).error.code).toBe("idempotency_in_flight");
    release();
    expect((await first).status).toBe(201);
    const third = await asResponse(ctx(k));
    expect(third.headers.get("idempotency-replayed")).toBe("true");
    expect(await third.json()).toEqual({ run: 1 });
    expect(runs).toBe(1);

    const k2 = key();
    const failing = compose([guard], async () => {
      throw new Error("boom");
    });
    await expect(failing(ctx(k2))).rejects.toThrow("boom");
    const retried = await handler(ctx(k2));
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotency-replayed")).toBeNull();
  });

  test("a request that outlives its lease can be taken over", async () => {
    const clock = new ManualClock();
    const { deps, guardStores } = server.services;
    const guard = idempotency(guardStores.idempotency, clock, deps.log, new FailOpen(deps.log, "idempotency"));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const slow = compose([guard], async () => {
      started();
      await gate;
      return Response.json({ who: "slow" });
    });
    const k = key();
    const first = slow(ctx(k));
    await running;
    clock.advance(IDEMPOTENCY_LEASE_MS + 1);
    const fast = await compose([guard], async () => Response.json({ who: "fast" }))(ctx(k));
    expect(await fast.json()).toEqual({ who: "fast" });
    release();
    await first;
    // The late finisher does not overwrite what the takeover stored.
    const replayed = await slow(ctx(k));
    expect(await replayed.json()).toEqual({ who: "fast" });
  });
});

describe("retention: 24 hours, then the key is forgotten", () => {
  let timed: TestServer;
  let torg: TestOrg;
  const clock = new ManualClock();
  beforeAll(async () => {
    timed = await startServer({ clock });
    torg = await newOrg(timed);
  });
  afterAll(() => timed.stop());

  test("replayed just before 24 h, executed afresh after", async () => {
    const k = key();
    const first = await torg.admin.post("/api/buckets", { name: "day-1" }, withKey(k));
    expect(first.status).toBe(201);
    clock.advance(IDEMPOTENCY_RETENTION_MS - 60_000);
    const within = await torg.admin.post("/api/buckets", { name: "day-1-retry" }, withKey(k));
    expect(within.headers.get("idempotency-replayed")).toBe("true");
    expect(within.body.id).toBe(first.body.id);
    clock.advance(60_000);
    const after = await torg.admin.post("/api/buckets", { name: "day-2" }, withKey(k));
    expect(after.status).toBe(201);
    expect(after.headers.get("idempotency-replayed")).toBeNull();
    expect(after.body.name).toBe("day-2");
    // and the fresh response is itself stored for another 24 h
    const again = await torg.admin.post("/api/buckets", { name: "day-2-retry" }, withKey(k));
    expect(again.body.id).toBe(after.body.id);
  });
});
