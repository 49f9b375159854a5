import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import sharp from "sharp";
import { MediaError } from "../../worker/derivatives/errors.ts";
import { NicedHost } from "../../worker/derivatives/render-pool.ts";

/**
 * The picture process (worker/derivatives/render-pool.ts): it runs at the niceness asked for,
 * a decoder failure comes back as the same kind of error, and a child that dies fails only the
 * requests it held; the next request starts a new one.
 */
const webp = { fit: "cover", format: "webp", quality: 80, gravity: "center", metadata: "none" } as const;
const limits = { maxPixels: 100_000_000 };
const picture = (w: number, h: number) => sharp({ create: { width: w, height: h, channels: 3, background: "#3a6" } }).png().toBuffer();
const niceOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[16]);
/** The niceness a child asked to run at `n` gets: never above the service's own (a test run started under `nice` keeps its). */
const lowered = (n: number) => Math.max(n, getPriority());

describe("picture process", () => {
  test("renders in a child at the niceness asked for; a file that does not decode is a MediaError", async () => {
    const host = new NicedHost({ nice: 7, idle: false }, 30_000);
    const made = await host.transform(await picture(64, 48), { ...webp, width: 32 }, limits);
    expect(made.contentType).toBe("image/webp");
    expect([made.width, made.height]).toEqual([32, 24]);
    expect((await sharp(made.bytes).metadata()).format).toBe("webp");
    expect(host.pid).not.toBeNull();
    if (Bun.which("nice")) expect(niceOf(host.pid!)).toBe(lowered(7));
    const refused = await host.transform(Buffer.from("not a picture"), { ...webp, width: 32 }, limits).catch((e) => e);
    expect(refused).toBeInstanceOf(MediaError);
  });

  // Linux's scheduling policies: 0 SCHED_OTHER, 5 SCHED_IDLE (/proc/<pid>/sched).
  const policyOf = (pid: number) => Number(/^policy\s*:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/sched`, "utf8"))?.[1]);

  test.skipIf(!Bun.which("chrt") || !Bun.which("nice"))("with idle, the child runs in the idle scheduling class as well (WORKER_SCHED_IDLE)", async () => {
    const idle = new NicedHost({ nice: 5, idle: true }, 30_000);
    await idle.transform(await picture(16, 16), { ...webp, width: 8 }, limits);
    expect([policyOf(idle.pid!), niceOf(idle.pid!)]).toEqual([5, lowered(5)]);
    const plain = new NicedHost({ nice: 5, idle: false }, 30_000);
    await plain.transform(await picture(16, 16), { ...webp, width: 8 }, limits);
    expect([policyOf(plain.pid!), niceOf(plain.pid!)]).toEqual([0, lowered(5)]);
  });

  // Linux's autogroups share the CPU between sessions before niceness and the idle class rank
  // threads within one: the child's own session at niceness 19 is what makes it yield to
  // PostgreSQL and Redis, which run in sessions of their own.
  const autogroupOf = (pid: number) => readFileSync(`/proc/${pid}/autogroup`, "utf8").trim();
  const sessionOf = (pid: number) => {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
  };
  const autogroups = existsSync("/proc/self/autogroup") && !!Bun.which("setsid") && !!Bun.which("chrt") && !!Bun.which("nice");

  test.skipIf(!autogroups)("a lowered child leads a session of its own, whose autogroup it lowers; the service's stays as it was", async () => {
    const mine = autogroupOf(process.pid);
    const idle = new NicedHost({ nice: 5, idle: true }, 30_000);
    await idle.transform(await picture(16, 16), { ...webp, width: 8 }, limits);
    expect(sessionOf(idle.pid!)).toBe(idle.pid!);
    expect(autogroupOf(idle.pid!)).toMatch(/ nice 19$/);
    expect(autogroupOf(idle.pid!).split(" ")[0]).not.toBe(mine.split(" ")[0]);
    const plain = new NicedHost({ nice: 5, idle: false }, 30_000);
    await plain.transform(await picture(16, 16), { ...webp, width: 8 }, limits);
    expect(sessionOf(plain.pid!)).toBe(plain.pid!);
    expect(autogroupOf(plain.pid!)).toMatch(new RegExp(` nice ${lowered(5)}$`));
    expect(autogroupOf(process.pid)).toBe(mine);
  });

  test.skipIf(!autogroups)("a child that shares the service's session leaves the autogroup alone", async () => {
    const mine = autogroupOf(process.pid);
    const script = `import { lowerOwnAutogroup } from ${JSON.stringify(`${import.meta.dir}/../../worker/derivatives/nice-command.ts`)}; lowerOwnAutogroup();`;
    const proc = Bun.spawn([Bun.which("chrt")!, "--idle", "0", process.execPath, "-e", script]);
    expect(await proc.exited).toBe(0);
    expect(autogroupOf(process.pid)).toBe(mine);
  });

  test("a child that dies fails what it held; the next request gets a new child", async () => {
    const host = new NicedHost({ nice: 0, idle: false }, 30_000);
    await host.transform(await picture(16, 16), { ...webp, width: 8 }, limits);
    const first = host.pid!;
    // A large render keeps the child busy while it is killed.
    const held = host.transform(await picture(6000, 4000), { ...webp, width: 3000 }, limits);
    process.kill(first, "SIGKILL");
    const err = await held.catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(MediaError);
    const again = await host.transform(await picture(16, 16), { ...webp, width: 8 }, limits);
    expect(again.width).toBe(8);
    expect(host.pid).not.toBe(first);
  }, 30_000);
});

describe.skipIf(!Bun.which("nice"))("nicedCommand", () => {
  const ask = async (prefix: string[]) => {
    const code = `import { nicedCommand } from ${JSON.stringify(`${import.meta.dir}/../../worker/derivatives/nice-command.ts`)}; console.log(JSON.stringify(nicedCommand({ nice: 10, idle: false }, ["x"])))`;
    const proc = Bun.spawn([...prefix, process.execPath, "-e", code], { stdout: "pipe" });
    return JSON.parse(await new Response(proc.stdout).text());
  };

  test("adds only what the caller's own niceness lacks: a worker already at 10 starts its children at 10, not 19", async () => {
    const own = getPriority();
    // A lowered child also starts its own session (lowerOwnAutogroup), where Linux has setsid.
    const session = Bun.which("setsid") ? [Bun.which("setsid")] : [];
    const expected = (niceness: number) => (niceness < 10 ? [...session, Bun.which("nice"), "-n", String(10 - niceness), "x"] : [...session, "x"]);
    expect(await ask([])).toEqual(expected(own));
    expect(await ask([Bun.which("nice")!, "-n", "4"])).toEqual(expected(Math.min(own + 4, 19)));
    expect(await ask([Bun.which("nice")!, "-n", "10"])).toEqual([...session, "x"]);
    expect(await ask([Bun.which("nice")!, "-n", "15"])).toEqual([...session, "x"]);
    // At niceness 0 nothing is changed, idle or not.
    const { nicedCommand } = await import("../../worker/derivatives/nice-command.ts");
    expect(nicedCommand({ nice: 0, idle: true }, ["x"])).toEqual(["x"]);
  });
});
