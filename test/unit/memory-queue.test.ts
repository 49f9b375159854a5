import { describe, expect, test } from "bun:test";
import type { JobRun, Processors, QueuedJob } from "../../domain/ports/queue.ts";
import { type JobLedger, MemoryQueue } from "../../worker/memory-queue.ts";

const silent = { debug() {}, info() {}, warn() {}, error() {} };

class FakeLedger implements JobLedger {
  settledJobs: [string, string | null][] = [];
  releasedIds: string[] = [];
  renewedIds: string[][] = [];
  async settled(id: string, error: string | null) {
    this.settledJobs.push([id, error]);
  }
  async released(ids: string[]) {
    this.releasedIds.push(...ids);
  }
  async renewed(ids: string[]) {
    this.renewedIds.push(ids);
  }
}

const job = (id: string): QueuedJob => ({ id, name: "media.purge", data: { orgId: "o", objectId: id } });
const opts = (ledger: JobLedger, extra: Partial<{ slots: { cpu: number; io: number }; attempts: number; backoffMs: number; lockMs: number }> = {}) => ({
  slots: { cpu: 1, io: 1 },
  attempts: 3,
  backoffMs: 10,
  lockMs: 60_000,
  ledger,
  ...extra,
});

describe("MemoryQueue", () => {
  test("runs each id once (also when handed over again after it settled), and settles it in the ledger", async () => {
    const ledger = new FakeLedger();
    const runs: string[] = [];
    const sut = new MemoryQueue({ "media.purge": { run: async (j) => void runs.push(j.id) } }, silent, opts(ledger));
    await sut.add(job("a"));
    await sut.add(job("a"));
    await sut.add(job("b"));
    await sut.drain();
    await sut.add(job("a"));
    await sut.drain();
    expect(runs).toEqual(["a", "b"]);
    // a repeat of a settled id records its end again instead of running it
    expect(ledger.settledJobs.filter(([id]) => id === "b")).toEqual([["b", null]]);
    expect(ledger.settledJobs.filter(([id]) => id === "a").length).toBeGreaterThanOrEqual(2);
    expect(ledger.settledJobs.every(([, error]) => error === null)).toBe(true);
    await sut.close();
  });

  test("retries with exponential backoff, tells the processor which attempt it is, then fails for good", async () => {
    const ledger = new FakeLedger();
    const seen: { run: JobRun; at: number }[] = [];
    const start = performance.now();
    const processors: Processors = {
      "media.purge": {
        run: async (_j, run) => {
          seen.push({ run, at: performance.now() - start });
          throw new Error("broken file");
        },
      },
    };
    const sut = new MemoryQueue(processors, silent, opts(ledger, { backoffMs: 50 }));
    await sut.add(job("x"));
    await sut.drain();
    expect(seen.map((s) => s.run)).toEqual([
      { attempt: 1, attempts: 3 },
      { attempt: 2, attempts: 3 },
      { attempt: 3, attempts: 3 },
    ]);
    expect(seen[2]!.at - seen[0]!.at).toBeGreaterThanOrEqual(140); // 50 + 100
    expect(ledger.settledJobs).toEqual([["x", "broken file"]]);
    expect(sut.failed.map((f) => [f.job.id, f.error, f.attempts])).toEqual([["x", "broken file", 3]]);
    await sut.close();
  });

  test("close finishes the job in hand and hands back every job not started or waiting for a retry", async () => {
    const ledger = new FakeLedger();
    let release!: () => void;
    const inHand = new Promise<void>((r) => (release = r));
    const processors: Processors = {
      "media.purge": {
        run: async (j) => {
          if (j.id === "slow") await inHand;
          if (j.id === "flaky") throw new Error("again later");
        },
      },
    };
    const sut = new MemoryQueue(processors, silent, opts(ledger, { backoffMs: 60_000 }));
    await sut.add(job("flaky"));
    await sut.add(job("slow"));
    await sut.add(job("queued"));
    await Bun.sleep(20);
    const closing = sut.close();
    await Bun.sleep(20);
    expect(ledger.settledJobs).toEqual([]);
    release();
    await closing;
    expect(ledger.settledJobs).toEqual([["slow", null]]);
    expect(ledger.releasedIds.sort()).toEqual(["flaky", "queued"]);
    await expect(sut.add(job("late"))).rejects.toThrow("closed");
  });

  test("claims of every held job are renewed while they are held", async () => {
    const ledger = new FakeLedger();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const sut = new MemoryQueue({ "media.purge": { run: () => held } }, silent, opts(ledger, { lockMs: 1000 }));
    await sut.add(job("a"));
    await sut.add(job("b"));
    await Bun.sleep(1100);
    expect(ledger.renewedIds.length).toBeGreaterThanOrEqual(1);
    expect(ledger.renewedIds[0]!.sort()).toEqual(["a", "b"]);
    release();
    await sut.close();
  });

  test("a job without a processor is settled with a reason, not retried forever", async () => {
    const ledger = new FakeLedger();
    const sut = new MemoryQueue({}, silent, opts(ledger));
    await sut.add(job("orphan"));
    await sut.drain();
    expect(ledger.settledJobs).toEqual([["orphan", "no processor for media.purge"]]);
    await sut.close();
  });

  describe("classes and fairness", () => {
    /** Processors that record the order jobs start in and hold each until `finish(id)` (or `open()`). */
    function gated() {
      const started: string[] = [];
      const releases = new Map<string, () => void>();
      let opened = false;
      const run = (j: QueuedJob) =>
        new Promise<void>((resolve) => {
          started.push(j.id);
          if (opened) resolve();
          else releases.set(j.id, resolve);
        });
      const processors: Processors = { "media.purge": { run }, "derivatives.generate": { run } };
      const finish = async (id: string) => {
        releases.get(id)!();
        releases.delete(id);
        await Bun.sleep(5);
      };
      /** Lets every job held, and every later one, finish. */
      const open = () => {
        opened = true;
        for (const r of releases.values()) r();
        releases.clear();
      };
      return { started, finish, open, processors };
    }
    const of = (org: string, id: string, name: "media.purge" | "derivatives.generate" = "media.purge"): QueuedJob => ({ id, name, data: { orgId: org, objectId: id } });

    test("a cpu job runs while io jobs hold every io slot, and the other way round (separate slots)", async () => {
      const g = gated();
      const sut = new MemoryQueue(g.processors, silent, opts(new FakeLedger(), { slots: { cpu: 1, io: 2 } }));
      for (const id of ["io1", "io2", "io3"]) await sut.add(of("a", id));
      await sut.add(of("b", "thumb1", "derivatives.generate"));
      await sut.add(of("b", "thumb2", "derivatives.generate"));
      await Bun.sleep(5);
      expect(g.started.sort()).toEqual(["io1", "io2", "thumb1"]);
      expect(await sut.counts()).toEqual({ waiting: 2, active: 3, delayed: 0 });
      await g.finish("thumb1");
      expect(g.started).toContain("thumb2");
      expect(g.started).not.toContain("io3");
      g.open();
      await sut.drain();
      expect(g.started).toContain("io3");
      await sut.close();
    });

    test("one slot: organizations take turns, a newcomer before the organization that just had one", async () => {
      const g = gated();
      const sut = new MemoryQueue(g.processors, silent, opts(new FakeLedger(), { slots: { cpu: 1, io: 1 } }));
      for (const id of ["a1", "a2", "a3", "a4"]) await sut.add(of("a", id));
      for (const id of ["b1", "b2"]) await sut.add(of("b", id));
      await sut.add(of("c", "c1"));
      for (let i = 0; i < 7; i++) await g.finish(g.started[i]!);
      await sut.drain();
      expect(g.started).toEqual(["a1", "b1", "c1", "a2", "b2", "a3", "a4"]);
      await sut.close();
    });

    test("many slots held by one organization: another's job takes the first slot that frees", async () => {
      const g = gated();
      const sut = new MemoryQueue(g.processors, silent, opts(new FakeLedger(), { slots: { cpu: 1, io: 4 } }));
      for (let i = 1; i <= 40; i++) await sut.add(of("a", `a${i}`));
      await sut.add(of("b", "b1"));
      await Bun.sleep(5);
      expect(g.started).toEqual(["a1", "a2", "a3", "a4"]);
      await g.finish("a1");
      // The first slot to free goes to b, not to the 36 of a's jobs queued before it.
      expect(g.started).toEqual(["a1", "a2", "a3", "a4", "b1"]);
      await g.finish("b1");
      expect(g.started.at(-1)).toBe("a5");
      g.open();
      await sut.drain();
      expect(g.started).toHaveLength(41);
      await sut.close();
    });
  });
});
