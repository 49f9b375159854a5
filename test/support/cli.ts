import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run } from "../../cli/run.ts";

/** The CLI as users run it: a separate process, configured by environment and flags only. */
export const CLI = join(import.meta.dir, "../../cli/main.ts");

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliEnv {
  url?: string;
  key?: string;
  /** XDG_CONFIG_HOME for the run (profiles, resume files); a fresh directory when omitted. */
  configHome?: string;
  extra?: Record<string, string>;
}

const made: string[] = [];

/** Removes every directory tempConfigHome made; call it from afterAll. */
export function removeTempConfigHomes(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A fresh XDG_CONFIG_HOME (see removeTempConfigHomes). */
export function tempConfigHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "media-cli-config-"));
  made.push(dir);
  return dir;
}

export function cliEnv(opts: CliEnv = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    XDG_CONFIG_HOME: opts.configHome ?? tempConfigHome(),
    ...(opts.url ? { MEDIA_URL: opts.url } : {}),
    ...(opts.key ? { MEDIA_API_KEY: opts.key } : {}),
    ...opts.extra,
  };
}

export async function runCli(args: string[], opts: CliEnv & { stdin?: string; cwd?: string } = {}): Promise<CliRun> {
  const proc = Bun.spawn([process.execPath, CLI, ...args], {
    env: cliEnv(opts),
    cwd: opts.cwd,
    stdin: opts.stdin !== undefined ? new TextEncoder().encode(opts.stdin) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** Runs the CLI and parses its stdout as JSON, failing loudly with stderr when it did not succeed. */
export async function cliJson<T = any>(args: string[], opts: CliEnv & { cwd?: string } = {}): Promise<T> {
  return jsonOf<T>(args, await runCli([...args, "--json"], opts));
}

/** A `--json` run's output parsed, or an error with its stderr when it did not succeed. */
function jsonOf<T>(args: string[], r: CliRun): T {
  if (r.code !== 0) throw new Error(`media ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/**
 * `media <args>` through the CLI's entry function (cli/run.ts, what cli/main.ts calls) in this
 * process, with pipes, not terminals, for stdout and stderr: the same parsing, requests and
 * output as a separate process, without its start. A start is mostly loading the registry, about
 * 0.3 s of CPU, and several times that on a loaded machine; a file of a few dozen commands spent
 * most of its time starting them. What belongs to the process itself (stdin, the exit status,
 * a closed pipe, signals, the compiled binary) is tested through runCli.
 */
export async function runCliHere(args: string[], opts: CliEnv = {}): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await run(args, {
    env: cliEnv(opts),
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
    stdoutIsTTY: false,
    stderrIsTTY: false,
    stdinIsTTY: false,
    columns: () => null,
  });
  return { code, stdout, stderr };
}

/** cliJson through runCliHere. */
export async function cliJsonHere<T = any>(args: string[], opts: CliEnv = {}): Promise<T> {
  return jsonOf<T>(args, await runCliHere([...args, "--json"], opts));
}
