import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * `.ci/run` keeps each run's logs in a directory of its own: two runs on one machine must not
 * write over each other's logs (they once went to fixed paths under /tmp).
 */
const root = join(import.meta.dir, "../..");
const script = readFileSync(join(root, ".ci/run"), "utf8");
/** The script without its comments: what bash runs. */
const code = script
  .split("\n")
  .filter((l) => !l.trim().startsWith("#"))
  .join("\n");

describe(".ci/run's logs", () => {
  test("every file the script writes with a redirection or tee is inside the run's log directory", () => {
    const targets = [...code.matchAll(/(?<![<>&0-9])[0-9]?>>?\s*("[^"]*"|[^\s;|)&]+)/g), ...code.matchAll(/\btee\s+(?:-a\s+)?("[^"]*"|\S+)/g)]
      .map((m) => m[1]!.replace(/^"|"$/g, ""))
      // `2>&1` and the like name a descriptor, not a file.
      .filter((t) => !t.startsWith("&"));
    expect(targets.length).toBeGreaterThanOrEqual(5);
    expect(targets.filter((t) => t !== "/dev/null" && !t.startsWith("$LOGS/"))).toEqual([]);
    expect(targets).toContain("$LOGS/test.log");
  });

  test("the log directory is a new one per run, under TMPDIR", async () => {
    const line = code.split("\n").find((l) => l.startsWith("LOGS="));
    expect(line).toBeDefined();
    const tmp = mkdtempSync(join(tmpdir(), "media-ci-logs-"));
    try {
      const run = async () => {
        const p = Bun.spawn(["bash", "-c", `log() { :; }\n${line}\nprintf '%s' "$LOGS"`], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TMPDIR: tmp }, stdout: "pipe" });
        const out = await new Response(p.stdout).text();
        expect(await p.exited).toBe(0);
        return out;
      };
      const first = await run();
      const second = await run();
      expect(first).not.toBe(second);
      for (const dir of [first, second]) expect(dir.startsWith(`${tmp}/`)).toBe(true);
      expect(readdirSync(tmp).length).toBe(2);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
