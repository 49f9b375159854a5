import { describe, expect, test } from "bun:test";
import { JOB_COUNTS_DEADLINE_MS, Metrics } from "../../app/metrics.ts";
import { parseMetrics, type Scrape } from "../support/prometheus.ts";

/**
 * A scrape's job counts come from sources that may hang (the queue's Redis, the database). A
 * source that never answers must not hold the scrape: it is given JOB_COUNTS_DEADLINE_MS, then
 * left out and media_jobs_unavailable says so, while what the other sources read is kept. A read
 * still out is shared by the next scrape rather than started again. The sources here are stand-ins
 * that never settle, so only the scrape's own deadline can end it (the BullMQ client's command
 * timeout, which also bounds a real Redis, plays no part).
 */
const CEILING_MS = 30_000;

async function scrape(metrics: Metrics): Promise<Scrape> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ceiling = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the scrape did not answer within ${CEILING_MS} ms`)), CEILING_MS);
  });
  try {
    return parseMetrics(await Promise.race([metrics.text(), ceiling]));
  } finally {
    clearTimeout(timer);
  }
}

const states = (s: Scrape) => s.samples("media_jobs").map((x) => `${x.labels.state}=${x.value}`).sort();

describe("the job counts of a scrape", () => {
  test("the deadline is the 1 s docs/operations.md names", () => {
    expect(JOB_COUNTS_DEADLINE_MS).toBe(1_000);
  });

  test("a source that never answers: the scrape answers, the other source's counts kept, unavailable 1", async () => {
    const metrics = new Metrics({ role: "server", defaultMetrics: false });
    let queueReads = 0;
    metrics.observe({
      jobs: [
        () => {
          queueReads++;
          return new Promise<Record<string, number>>(() => {});
        },
        async () => ({ outbox: 3 }),
      ],
    });
    const first = await scrape(metrics);
    expect(first.value("media_jobs_unavailable")).toBe(1);
    expect(states(first)).toEqual(["outbox=3"]);
    // The hung read is still out: the next scrape waits on it again instead of sending another.
    const second = await scrape(metrics);
    expect(second.value("media_jobs_unavailable")).toBe(1);
    expect(states(second)).toEqual(["outbox=3"]);
    expect(queueReads).toBe(1);
  });

  test("a source that fails: unavailable 1; every source answering: unavailable 0 and all the counts", async () => {
    const metrics = new Metrics({ role: "server", defaultMetrics: false });
    let up = false;
    metrics.observe({
      jobs: [
        async () => {
          if (!up) throw new Error("connection refused");
          return { waiting: 2, active: 1 };
        },
        async () => ({ outbox: 0 }),
      ],
    });
    const down = await scrape(metrics);
    expect([down.value("media_jobs_unavailable"), states(down)]).toEqual([1, ["outbox=0"]]);
    up = true;
    const whole = await scrape(metrics);
    expect([whole.value("media_jobs_unavailable"), states(whole)]).toEqual([0, ["active=1", "outbox=0", "waiting=2"]]);
  });
});
