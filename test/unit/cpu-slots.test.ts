import { describe, expect, test } from "bun:test";
import { CpuSlots } from "../../worker/cpu-slots.ts";

const later = () => {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
};

describe("CpuSlots", () => {
  test("runs at most `size` at once, the waiting ones in the order they asked", async () => {
    const slots = new CpuSlots(2);
    const gates = [later(), later(), later(), later()];
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      slots.run(async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    await Bun.sleep(5);
    expect(started).toEqual([0, 1]);
    expect(slots.busy).toBe(2);
    gates[1]!.open();
    await Bun.sleep(5);
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.open();
    gates[2]!.open();
    gates[3]!.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(slots.busy).toBe(0);
  });

  test("a run that throws frees its slot for the next in line", async () => {
    const slots = new CpuSlots(1);
    const failing = slots.run(async () => {
      throw new Error("decoder crashed");
    });
    const next = slots.run(async () => "next");
    await expect(failing).rejects.toThrow("decoder crashed");
    expect(await next).toBe("next");
    expect(slots.busy).toBe(0);
  });
});
