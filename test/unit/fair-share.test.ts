import { describe, expect, test } from "bun:test";
import { FairLane, fairPriority, MAX_PRIORITY, orgOf } from "../../worker/fair-share.ts";

describe("fair shares between organizations", () => {
  test("a job's BullMQ priority is its organization's outstanding jobs in the class (itself included), within 1..2,097,152", () => {
    expect(fairPriority(1)).toBe(1);
    expect(fairPriority(2)).toBe(2);
    expect(fairPriority(40)).toBe(40);
    // A counter that drifted below zero or past BullMQ's bound still gives a priority BullMQ takes.
    expect(fairPriority(0)).toBe(1);
    expect(fairPriority(-5)).toBe(1);
    expect(fairPriority(MAX_PRIORITY + 10)).toBe(MAX_PRIORITY);
    expect(MAX_PRIORITY).toBe(2 ** 21);
  });

  test("the n-th outstanding job of every organization has priority n: queued in one burst, they run in turns", () => {
    // What BullMQ does with the priorities: lower first, then in order of arrival.
    const counters = new Map<string, number>();
    const queued: { org: string; priority: number; seq: number }[] = [];
    const arrivals = ["a", "a", "a", "a", "b", "a", "b", "c"];
    arrivals.forEach((org, seq) => {
      const n = (counters.get(org) ?? 0) + 1;
      counters.set(org, n);
      queued.push({ org, priority: fairPriority(n), seq });
    });
    const order = queued.sort((x, y) => x.priority - y.priority || x.seq - y.seq).map((q) => q.org);
    expect(order.join("")).toBe("abcabaaa");
  });

  test("the in-process lane: fewest running first, then the one served least recently; every job comes out once", () => {
    const lane = new FairLane<string>();
    for (const id of ["a1", "a2", "a3"]) lane.push("a", id);
    lane.push("b", "b1");
    expect(lane.take()).toEqual({ org: "a", item: "a1" });
    // a has one running, b none: b goes first whatever the order of arrival.
    expect(lane.take()).toEqual({ org: "b", item: "b1" });
    lane.done("a");
    lane.done("b");
    expect(lane.take()).toEqual({ org: "a", item: "a2" });
    expect(lane.take()).toEqual({ org: "a", item: "a3" });
    expect(lane.take()).toBeUndefined();
    expect(lane.size).toBe(0);
  });

  test("a long backlog of one organization is taken in order", () => {
    const lane = new FairLane<number>();
    for (let i = 0; i < 5000; i++) lane.push("a", i);
    const out: number[] = [];
    for (let next = lane.take(); next; next = lane.take()) {
      out.push(next.item);
      lane.done(next.org);
    }
    expect(out).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });

  test("every job payload names its organization", () => {
    expect(orgOf({ orgId: "o1", objectId: "x" })).toBe("o1");
    // Something without one (a job of an unknown shape) still runs, in a turn of its own.
    expect(orgOf({})).toBe("");
    expect(orgOf(null)).toBe("");
  });
});
