/**
 * `npm run bench -- ci-load`: how long `.ci/run` takes on a machine busy with other work. The
 * commit (HEAD, or `--commit=<rev>`) is checked out in a worktree of its own under the temporary
 * directory, so the run installs from the lockfile as a fresh clone does; busy processes run
 * beside it from its start to its end, and the load average is sampled every 30 s.
 *
 * Two ways to be busy (Linux shares the cores between sessions first when autogroups are on):
 * - `--loops=<n>` (default 4): n busy loops in the run's own session, each one more thread the
 *   suite's threads compete with one by one. The way the runs of 2026-11-28 and 2026-11-29 were
 *   made, so their times compare.
 * - `--sessions=<n>`: n busy processes each in a session of its own (bench/_load.ts
 *   startCpuBurner), as n other agents' runs would be: the run's session gets a 1/(n+1) share
 *   of the cores while all are busy.
 *
 * Writes bench/results/ci-load.md (BENCH_NO_WRITE=1 leaves it): the time, the counts, the load,
 * and each pass's slowest files as `npm test` printed them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { percentile, startCpuBurner, stopOnExit, writeSection } from "./_load.ts";

const root = join(import.meta.dir, "..");
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const sessions = Number(arg("sessions") ?? 0);
const loops = Number(arg("loops") ?? (sessions > 0 ? 0 : 4));
const commit = arg("commit") ?? "HEAD";
if (![sessions, loops].every((n) => Number.isInteger(n) && n >= 0)) {
  console.error("--loops=<n> and --sessions=<n> take whole numbers");
  process.exit(2);
}

const git = (args: string[]) => {
  const r = Bun.spawnSync(["git", "-C", root, ...args], { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
};
const rev = git(["rev-parse", "--short", commit]);
const dir = join(mkdtempSync(join(tmpdir(), "media-bench-ci-")), "checkout");
git(["worktree", "add", "--detach", dir, rev]);

// Loops in this process's session (the run's too); burners in sessions of their own.
const inSession = Array.from({ length: loops }, () => Bun.spawn(["sh", "-c", "while :; do :; done"], { stdout: "ignore", stderr: "ignore" }));
const burner = startCpuBurner(sessions);
const loads: number[] = [];
const sampler = setInterval(() => loads.push(loadavg()[0]!), 30_000);
// Synchronous up to the burners' stop: on Ctrl-C the burner's own handler (startCpuBurner) exits
// the process after its first await, and the worktree must be gone by then.
const cleanup = async () => {
  clearInterval(sampler);
  for (const p of inSession) p.kill("SIGKILL");
  git(["worktree", "remove", "--force", dir]);
  rmSync(join(dir, ".."), { recursive: true, force: true });
  await burner.stop();
};
stopOnExit(cleanup);

const started = Date.now();
// .ci/run in this process's session: with --loops the loops share it, as intended.
const run = Bun.spawn([join(dir, ".ci/run")], { cwd: dir, stdout: "pipe", stderr: "pipe" });
const [out, err] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text()]);
const code = await run.exited;
const seconds = Math.round((Date.now() - started) / 1000);
await cleanup();

const counts = /^(\d+) passed, (\d+) failed$/m.exec(out.trimEnd().split("\n").at(-1) ?? "");
const slowest = [...out.matchAll(/^(.+: \d+ files, \d+ s in their tests; the slowest:\n(?: {2}.+\n)+)/gm)].map((m) => m[1]!.trimEnd());
const q = (p: number) => percentile(loads, p).toFixed(1);
const busy = [loops > 0 && `${loops} busy loop${loops === 1 ? "" : "s"} in the run's session`, sessions > 0 && `${sessions} busy process${sessions === 1 ? "" : "es"} in sessions of their own`].filter(Boolean).join(" and ") || "nothing else";
const section = [
  `## ci-load — \`.ci/run\` on a busy machine`,
  "",
  `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, commit ${rev}; beside it: ${busy}.`,
  "",
  `- **${(seconds / 60).toFixed(1)} min** (${seconds.toLocaleString("en-US")} s), exit status ${code}, ${counts ? `${counts[1]} passed, ${counts[2]} failed` : "no final counts line"}`,
  `- load (1 min), ${loads.length} samples: min ${q(0)}, quartiles ${q(25)} / ${q(50)} / ${q(75)}, max ${q(100)}`,
  "",
  "Each pass's slowest files, as `npm test` printed them (seconds of the file's tests, under this load):",
  "",
  "```",
  ...slowest,
  "```",
].join("\n");
console.log(section);
if (code !== 0) console.error(out.split("\n").slice(-40).join("\n"), err.slice(-2000));
if (process.env.BENCH_NO_WRITE !== "1") writeSection("ci-load", section);
