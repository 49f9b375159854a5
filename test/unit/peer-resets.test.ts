import { describe, expect, test } from "bun:test";
import { join } from "node:path";

/**
 * The server and the worker live through a connection reset that reached no handler (the
 * database restarting under them), and still end, status 1, on any other uncaught error.
 * Each case is a child process (test/support/peer-reset-process.ts) with a real reset.
 */
const script = join(import.meta.dir, "../support/peer-reset-process.ts");

async function run(mode: string): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([process.execPath, script], { env: { ...process.env, MODE: mode }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

describe("a connection reset with no handler left", () => {
  for (const mode of ["reset-event", "reset-rejection"]) {
    test(`${mode}: logged as a warning with its stack, and the process goes on`, async () => {
      const r = await run(mode);
      expect(r.out).toBe("alive\n");
      expect(r.code).toBe(0);
      const line = JSON.parse(r.err.trim().split("\n").at(-1)!);
      expect(line).toMatchObject({ level: "warn", error: "ECONNRESET (read)" });
      expect(line.msg).toContain("reached no handler");
      expect(typeof line.stack).toBe("string");
    });
  }
  for (const mode of ["other-exception", "other-rejection"]) {
    test(`${mode}: written out, and the process ends with status 1 as with no handler`, async () => {
      const r = await run(mode);
      expect(r.out).toBe("");
      expect(r.code).toBe(1);
      expect(r.err).toContain("a genuine bug");
    });
  }
  test("without a mode the child lives: the cases above differ by the error alone", async () => {
    const r = await run("none");
    expect(r).toMatchObject({ code: 0, out: "alive\n" });
  });
});
