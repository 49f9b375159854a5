import { describe, expect, test } from "bun:test";
import { AppError } from "../../domain/core/errors.ts";
import { OrgConcurrency } from "../../domain/guards/org-concurrency.ts";

/**
 * The per-organization time budget of OrgConcurrency (ORG_SEARCH_MS_PER_SECOND): work is charged
 * what it took, an organization in debt waits for the refill or is refused with 429, and other
 * organizations are not touched. The clock is real time plus a skew the "work" advances, so a
 * search of 400 ms takes no real time; waits for the refill are real (tens of milliseconds).
 */
function clock() {
  let skew = 0;
  return { now: () => performance.now() + skew, spend: (ms: number) => (skew += ms) };
}

async function refusal(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("per-organization time budget", () => {
  test("work within the burst runs at once; an organization that overdrew is refused with Retry-After, another is served", async () => {
    const c = clock();
    // 100 ms of work per second, 200 ms at once; a refused request would have to wait 50 ms at most.
    const slots = new OrgConcurrency("searches", 3, 50, { msPerSecond: 100, burstMs: 200 }, c.now);
    await slots.run("a", async () => c.spend(150));
    await slots.run("a", async () => c.spend(400)); // within the burst when it started; now 350 ms in debt
    expect(slots.budgetLeft("a")!).toBeLessThan(-300);
    const err = await refusal(slots.run("a", async () => c.spend(1)));
    expect(err.code).toBe("rate_limited");
    expect(err.message).toContain("searches");
    expect(err.message).toContain("100 ms per second");
    // 350 ms of debt at 100 ms per second: about 3.5 s.
    expect(err.retryAfterSeconds).toBe(4);
    expect(await slots.run("b", async () => "served")).toBe("served");
  });

  test("an organization whose debt clears within the wait waits, then runs", async () => {
    const c = clock();
    // 1000 ms per second: 30 ms of debt clears in 30 ms of real time, within the 500 ms wait.
    const slots = new OrgConcurrency("searches", 3, 500, { msPerSecond: 1000, burstMs: 10 }, c.now);
    await slots.run("a", async () => c.spend(40));
    const started = performance.now();
    expect(await slots.run("a", async () => "ran")).toBe("ran");
    expect(performance.now() - started).toBeGreaterThanOrEqual(20);
  });

  test("work arriving together is let in one at a time once the budget is nearly spent (each takes its expected cost)", async () => {
    const c = clock();
    const slots = new OrgConcurrency("searches", 10, 0, { msPerSecond: 10, burstMs: 150 }, c.now);
    // One search of 100 ms teaches the expected cost; 50 ms are left.
    await slots.run("a", async () => c.spend(100));
    let ran = 0;
    const outcomes = await Promise.allSettled(Array.from({ length: 3 }, () => slots.run("a", async () => ran++)));
    // The first takes its expected 100 ms (the bucket goes to -50); the other two find it in debt.
    expect(ran).toBe(1);
    expect(outcomes.filter((o) => o.status === "rejected")).toHaveLength(2);
  });

  test("a refusal by the concurrency cap gives back what the budget took", async () => {
    const c = clock();
    const slots = new OrgConcurrency("searches", 1, 10, { msPerSecond: 1, burstMs: 1000 }, c.now);
    await slots.run("a", async () => c.spend(100));
    const before = slots.budgetLeft("a")!;
    let release!: () => void;
    const heldFrom = performance.now();
    const held = slots.run("a", () => new Promise<void>((r) => (release = r)));
    const err = await refusal(slots.run("a", async () => 0));
    expect(err.message).toContain("at once");
    release();
    await held;
    const heldMs = performance.now() - heldFrom;
    // Only the held search's time was spent; the refused one's expected 100 ms came back.
    expect(slots.budgetLeft("a")!).toBeGreaterThanOrEqual(before - heldMs - 1);
    expect(heldMs).toBeLessThan(90);
  });

  test("without a budget only the cap applies", async () => {
    const slots = new OrgConcurrency("searches", 2, 0);
    for (let i = 0; i < 5; i++) await slots.run("a", async () => Bun.sleep(1));
    expect(slots.budgetLeft("a")).toBeNull();
  });
});
