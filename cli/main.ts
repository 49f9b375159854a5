#!/usr/bin/env bun
/**
 * `media`: the command-line client. Commands come from the service's tool registry
 * (cli/commands.ts); transfers, login and the MCP bridge are built in. See docs/cli.md.
 */
import { exitQuietlyOnClosedPipe } from "./closed-pipe.ts";
import { run } from "./run.ts";

exitQuietlyOnClosedPipe();

const code = await run(process.argv.slice(2), {
  env: process.env,
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  stdoutIsTTY: Boolean(process.stdout.isTTY),
  stderrIsTTY: Boolean(process.stderr.isTTY),
  stdinIsTTY: Boolean(process.stdin.isTTY),
  columns: () => (process.stdout.isTTY ? (process.stdout.columns ?? 80) : null),
});
process.exitCode = code;
