import { describe, expect, test } from "bun:test";
import { gcra, gcraParams } from "../../domain/guards/rate-limit.ts";
import { rateLimit, rateLimitPolicy, retryAfter } from "../../http/guards/headers.ts";
import { MemoryRateLimitStore } from "../../http/guards/stores/memory.ts";

const S = 1_000_000;
const T0 = 1_700_000_000_000 * 1000;

/** Runs n requests at one instant through gcra, carrying the stored value like a store would. */
function burst(n: number, limit: number, now = T0, start: number | null = null) {
  const p = gcraParams({ limit, windowMs: 60_000 });
  let tat = start;
  const out = [];
  for (let i = 0; i < n; i++) {
    const d = gcra(tat, now, p);
    if (d.allowed) tat = d.tatUs;
    out.push(d);
  }
  return { out, tat, p };
}

describe("gcra", () => {
  test("a fresh bucket allows `limit` at once, counting remaining down to 0, then refuses", () => {
    const { out } = burst(301, 300);
    expect(out.slice(0, 300).every((d) => d.allowed)).toBe(true);
    expect(out.slice(0, 300).map((d) => d.remaining)).toEqual(Array.from({ length: 300 }, (_, i) => 299 - i));
    expect(out[300]).toMatchObject({ allowed: false, remaining: 0 });
  });

  test("a refusal says when one unit comes back (window/limit) and when all are back (the window)", () => {
    const { out } = burst(301, 300);
    expect(out[300]!.retryAfterUs).toBe(200_000);
    expect(out[300]!.resetUs).toBe(60 * S);
    expect(out[0]!.resetUs).toBe(200_000);
  });

  test("units come back continuously: one every window/limit", () => {
    const { tat, p } = burst(5, 5);
    expect(gcra(tat, T0 + 11 * S, p).allowed).toBe(false);
    const after = gcra(tat, T0 + 12 * S, p);
    expect(after).toMatchObject({ allowed: true, remaining: 0 });
  });

  test("a whole window of idleness restores the whole quota", () => {
    const { tat, p } = burst(5, 5);
    expect(gcra(tat, T0 + 60 * S, p)).toMatchObject({ allowed: true, remaining: 4 });
  });

  test("limits that do not divide the window still allow exactly `limit` at once", () => {
    for (const limit of [7, 13, 299, 100_000]) {
      const { out } = burst(limit + 1, limit);
      expect(out.filter((d) => d.allowed)).toHaveLength(limit);
      expect(out[limit - 1]!.remaining).toBe(0);
    }
  });

  test("a clock that jumped back more than a window starts the bucket afresh", () => {
    const { tat, p } = burst(5, 5, T0 + 86_400 * S);
    expect(gcra(tat, T0, p)).toMatchObject({ allowed: true, remaining: 4 });
  });
});

describe("rate limit headers", () => {
  test("policy and state in the draft's structured form", () => {
    expect(rateLimitPolicy(300, 60_000)).toBe('"default";q=300;w=60');
    expect(rateLimit(299, 200_000)).toBe('"default";r=299;t=1');
    expect(rateLimit(0, 60 * S)).toBe('"default";r=0;t=60');
    expect(rateLimit(-1, 0)).toBe('"default";r=0;t=0');
  });
  test("Retry-After is whole seconds rounded up, never 0", () => {
    expect(retryAfter(200_000)).toBe("1");
    expect(retryAfter(12 * S)).toBe("12");
    expect(retryAfter(12 * S + 1)).toBe("13");
    expect(retryAfter(0)).toBe("1");
  });
});

describe("MemoryRateLimitStore", () => {
  test("keeps one bucket per key", async () => {
    const sut = new MemoryRateLimitStore();
    const p = gcraParams({ limit: 2, windowMs: 60_000 });
    expect((await sut.take("a", T0, p)).allowed).toBe(true);
    expect((await sut.take("a", T0, p)).allowed).toBe(true);
    expect((await sut.take("a", T0, p)).allowed).toBe(false);
    expect((await sut.take("b", T0, p)).remaining).toBe(1);
  });
  test("a refusal does not consume: the client is not pushed further back by retrying", async () => {
    const sut = new MemoryRateLimitStore();
    const p = gcraParams({ limit: 1, windowMs: 60_000 });
    await sut.take("a", T0, p);
    for (let i = 0; i < 10; i++) await sut.take("a", T0 + i * S, p);
    expect((await sut.take("a", T0 + 60 * S, p)).allowed).toBe(true);
  });
});
