import { afterAll, describe, expect, test } from "bun:test";
import { openRedis, type RedisConnection } from "../../app/redis.ts";
import { createLogger } from "../../app/log.ts";
import { gcra, gcraParams } from "../../domain/guards/rate-limit.ts";
import { memoryGuardStores } from "../../http/guards/stores/memory.ts";
import type { GuardStores } from "../../http/guards/stores/ports.ts";
import { redisGuardStores } from "../../http/guards/stores/redis.ts";
import { testEnv } from "../support/env.ts";

/**
 * One contract, both adapters: the Lua scripts must decide exactly as the TypeScript does.
 * The Redis half runs when the run has Redis.
 */
const connections: RedisConnection[] = [];
afterAll(async () => {
  for (const c of connections) await c.close();
});

const adapters: [string, () => Promise<GuardStores>][] = [["memory", async () => memoryGuardStores()]];
if (testEnv.redisUrl) {
  adapters.push([
    "redis",
    async () => {
      const c = await openRedis(testEnv.redisUrl!, createLogger("error"));
      connections.push(c);
      return redisGuardStores(c.client, `${testEnv.redisPrefix}-stores-${crypto.randomUUID()}`);
    },
  ]);
}

const S = 1_000_000;
const H = 3_600_000;

for (const [name, open] of adapters) {
  describe(`${name} stores`, () => {
    test("a signature is accepted once, by every instance sharing the store", async () => {
      const stores = await open();
      const now = Date.now();
      expect(await stores.replay.firstUse("sig-a", now, 60_000)).toBe(true);
      expect(await stores.replay.firstUse("sig-a", now + 1000, 60_000)).toBe(false);
      expect(await stores.replay.firstUse("sig-b", now + 1000, 60_000)).toBe(true);
      // Forgotten once its time is up (short here; the service keeps signatures ten minutes).
      expect(await stores.replay.firstUse("sig-c", now, 50)).toBe(true);
      await Bun.sleep(120);
      expect(await stores.replay.firstUse("sig-c", Date.now(), 50)).toBe(true);
    });

    test("rate limit decisions match gcra() step for step, over a random schedule", async () => {
      const stores = await open();
      for (const limit of [1, 3, 7, 300]) {
        const p = gcraParams({ limit, windowMs: 60_000 });
        let tat: number | null = null;
        let now = 1_700_000_000_000_000;
        let seed = limit;
        const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
        for (let i = 0; i < 400; i++) {
          now += Math.floor(rand() * 3 * p.intervalUs);
          const expected = gcra(tat, now, p);
          if (expected.allowed) tat = expected.tatUs;
          const { tatUs: _, ...decision } = expected;
          expect(await stores.rateLimit.take(`k${limit}`, now, p)).toEqual(decision);
        }
      }
    });

    test("a clock that jumped back starts afresh, as in gcra()", async () => {
      const stores = await open();
      const p = gcraParams({ limit: 2, windowMs: 60_000 });
      const t = 1_700_000_000_000_000;
      await stores.rateLimit.take("back", t + 86_400 * S, p);
      await stores.rateLimit.take("back", t + 86_400 * S, p);
      expect(await stores.rateLimit.take("back", t, p)).toMatchObject({ allowed: true, remaining: 1 });
    });

    test("takeAll: counts, then claims only what it admits", async () => {
      const stores = await open();
      const p = gcraParams({ limit: 2, windowMs: 60_000 });
      const t = 1_700_000_000_000_000;
      const claim = (id: string) => ({ id, owner: "o", nowMs: t / 1000, leaseMs: 60_000 });
      const tb = [{ key: `tb-${crypto.randomUUID()}`, params: p }];
      const a = crypto.randomUUID();
      expect(await stores.takeAll(tb, t, claim(a))).toEqual({ decisions: [{ allowed: true, remaining: 1, resetUs: 30 * S, retryAfterUs: 0 }], begun: { state: "acquired" } });
      expect((await stores.takeAll(tb, t, claim(a))).begun).toEqual({ state: "in_flight" });
      const refused = crypto.randomUUID();
      expect(await stores.takeAll(tb, t, claim(refused))).toEqual({ decisions: [{ allowed: false, remaining: 0, resetUs: 60 * S, retryAfterUs: 30 * S }], begun: null });
      // The refused request claimed nothing.
      expect(await stores.idempotency.begin(claim(refused))).toEqual({ state: "acquired" });
    });

    test("takeAll over two buckets: each counted in order; a refusal spends none after it and claims nothing", async () => {
      const stores = await open();
      const t = 1_700_000_000_000_000;
      const claim = (id: string) => ({ id, owner: "o", nowMs: t / 1000, leaseMs: 60_000 });
      const key = { key: `key-${crypto.randomUUID()}`, params: gcraParams({ limit: 2, windowMs: 60_000 }) };
      const org = { key: `org-${crypto.randomUUID()}`, params: gcraParams({ limit: 3, windowMs: 60_000 }) };
      const other = { key: `key-${crypto.randomUUID()}`, params: key.params };
      // Both allow: one decision each (each bucket's own remaining count), and the claim is made.
      const first = await stores.takeAll([key, org], t, claim(crypto.randomUUID()));
      expect(first.decisions.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 1],
        [true, 2],
      ]);
      expect(first.begun).toEqual({ state: "acquired" });
      // Without a claim nothing is begun.
      expect((await stores.takeAll([key, org], t, null)).begun).toBeNull();
      // The key's bucket is empty: refused there, and the organization's unit is not spent.
      const byKey = await stores.takeAll([key, org], t, claim(crypto.randomUUID()));
      expect(byKey.decisions.map((d) => d.allowed)).toEqual([false]);
      expect(byKey.begun).toBeNull();
      expect((await stores.takeAll([other, org], t, null)).decisions.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 1],
        [true, 0],
      ]);
      // Now the organization's bucket is empty: the sibling key's unit is spent, the claim is not made.
      const id = crypto.randomUUID();
      const byOrg = await stores.takeAll([other, org], t, claim(id));
      expect(byOrg.decisions.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 0],
        [false, 0],
      ]);
      expect(byOrg.begun).toBeNull();
      expect(await stores.idempotency.begin(claim(id))).toEqual({ state: "acquired" });
      expect((await stores.takeAll([other], t, null)).decisions[0]!.allowed).toBe(false);
    });

    test("idempotency: claim, in flight, complete, replay, logical expiry", async () => {
      const { idempotency: sut } = await open();
      const id = crypto.randomUUID();
      const t = Date.now();
      expect(await sut.begin({ id, owner: "r1", nowMs: t, leaseMs: 60_000 })).toEqual({ state: "acquired" });
      expect(await sut.begin({ id, owner: "r2", nowMs: t + 1, leaseMs: 60_000 })).toEqual({ state: "in_flight" });
      await sut.complete(id, "r1", "sealed-body", t + 2, 24 * H);
      expect(await sut.begin({ id, owner: "r3", nowMs: t + 24 * H, leaseMs: 60_000 })).toEqual({ state: "done", response: "sealed-body" });
      expect(await sut.begin({ id, owner: "r4", nowMs: t + 24 * H + 2, leaseMs: 60_000 })).toEqual({ state: "acquired" });
    });

    test("idempotency: owners, release, takeover after the lease", async () => {
      const { idempotency: sut } = await open();
      const id = crypto.randomUUID();
      const t = Date.now();
      await sut.begin({ id, owner: "r1", nowMs: t, leaseMs: 1000 });
      await sut.release(id, "someone-else");
      expect((await sut.begin({ id, owner: "r2", nowMs: t, leaseMs: 1000 })).state).toBe("in_flight");
      await sut.release(id, "r1");
      expect((await sut.begin({ id, owner: "r2", nowMs: t, leaseMs: 1000 })).state).toBe("acquired");
      expect((await sut.begin({ id, owner: "r3", nowMs: t + 1000, leaseMs: 1000 })).state).toBe("acquired");
      await sut.complete(id, "r3", "third", t + 1500, H);
      await sut.complete(id, "r2", "second", t + 1600, H);
      expect(await sut.begin({ id, owner: "r4", nowMs: t + 1700, leaseMs: 1000 })).toEqual({ state: "done", response: "third" });
    });
  });
}
