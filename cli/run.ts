import type { AnyTool } from "../tools/define.ts";
import { registry } from "../tools/registry.ts";
import { ApiError } from "./client.ts";
import { isClosedPipe } from "./closed-pipe.ts";
import { allCommands, toolCommand } from "./commands.ts";
import { type Command, createContext, EXIT, exitCodeOf, GLOBAL_FLAGS, type Globals, Interrupted, type Io, NotConfigured } from "./context.ts";
import { type FlagSpec, flagOf, hint, kebab, parseArgs, UsageError } from "./flags.ts";
import { commandHelp, groupHelp, rootHelp } from "./help.ts";
import { StorageError } from "./transfer.ts";
import { VERSION } from "./version.ts";

interface Resolution {
  command: Command | null;
  /** Command words matched so far (a group when `command` is null). */
  words: string[];
  /** Everything else, in order: flags and positionals. */
  rest: string[];
}

const valueGlobals = new Set(GLOBAL_FLAGS.filter((f) => f.type !== "boolean").flatMap((f) => [flagOf(f), `--${f.name}`]));

/** Finds the command among the leading words; global flags (and their values) may come first. */
function resolve(argv: string[], commands: Command[], tools: readonly AnyTool[]): Resolution {
  const words: string[] = [];
  const rest: string[] = [];
  let command: Command | null = null;
  let matching = true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg.startsWith("-") && arg !== "-") {
      rest.push(arg);
      if (valueGlobals.has(arg) && i + 1 < argv.length) rest.push(argv[++i]!);
      continue;
    }
    if (matching && !command) {
      const candidate = [...words, arg];
      const exact = commands.find((c) => c.path.length === candidate.length && c.path.every((w, j) => w === candidate[j]));
      const prefix = commands.some((c) => c.path.length > candidate.length && candidate.every((w, j) => c.path[j] === w));
      if (words.length === 0 && !exact && !prefix) {
        const tool = tools.find((t) => t.name === arg);
        if (tool) {
          command = toolCommand(tool);
          words.push(arg);
          continue;
        }
      }
      if (exact || prefix) {
        words.push(arg);
        // A command that is also a group (an area tool) takes the next word only if it is a subcommand.
        if (exact && !prefix) command = exact;
        else if (exact) {
          const next = argv[i + 1];
          const sub = next !== undefined && commands.some((c) => c.path.length === candidate.length + 1 && candidate.every((w, j) => c.path[j] === w) && c.path[candidate.length] === next);
          if (!sub) command = exact;
        }
        continue;
      }
      matching = false;
    }
    rest.push(arg);
  }
  return { command, words, rest };
}

function globalsOf(values: Record<string, unknown>): Globals {
  return {
    json: values.json === true,
    quiet: values.quiet === true,
    help: values.help === true,
    ...(typeof values.profile === "string" ? { profile: values.profile } : {}),
    ...(typeof values.url === "string" ? { url: values.url } : {}),
    ...(typeof values.apiKey === "string" ? { apiKey: values.apiKey } : {}),
  };
}

/** Runs one command line; returns the exit code. Never throws. */
export async function run(argv: string[], io: Io, tools: readonly AnyTool[] = registry): Promise<number> {
  const commands = allCommands(tools);
  const jsonErrors = argv.includes("--json");
  let where: string | undefined;
  try {
    const { command, words, rest } = resolve(argv, commands, tools);
    where = words.join(" ") || undefined;
    if (!command) {
      // Only global flags make sense without a command; anything else is a usage error.
      parseArgs(rest.filter((a) => a !== "--version"), GLOBAL_FLAGS, where);
      const stray = rest.find((a) => !a.startsWith("-"));
      if (words.length === 0 && rest.includes("--version")) {
        io.out(`media ${VERSION}\n`);
        return EXIT.ok;
      }
      if (stray !== undefined) {
        const candidates = [...new Set(commands.filter((c) => words.every((w, j) => c.path[j] === w) && c.path.length > words.length).map((c) => c.path[words.length]!))];
        const full = [...words, stray].join(" ");
        if (words.length === 0 && stray === "help") return help(io, commands, rest.filter((a) => !a.startsWith("-")).slice(1));
        throw new UsageError(`unknown command '${full}'${hint(stray, candidates)}`, where);
      }
      if (words.length === 0) {
        io.out(rootHelp(commands));
        return EXIT.ok;
      }
      io.out(groupHelp(words, commands.filter((c) => words.every((w, j) => c.path[j] === w))));
      return EXIT.ok;
    }
    where = command.path.join(" ");
    // A tool field with the name of a global flag keeps its meaning for the tool; --json and --help stay global.
    const own = new Set(command.flags.map((f) => f.name));
    const globalsHere = GLOBAL_FLAGS.filter((g) => g.name === "json" || g.name === "help" || !own.has(g.name));
    const specs: FlagSpec[] = [...globalsHere, ...command.flags.filter((f) => !(f.name === "json" || f.name === "help"))];
    const parsed = parseArgs(rest, specs, where);
    const globals = globalsOf(parsed.values);
    if (globals.help) {
      io.out(commandHelp(command));
      return EXIT.ok;
    }
    for (const g of globalsHere) delete parsed.values[g.name];
    const missing = command.flags.filter((f) => f.required && !command.tool && parsed.values[f.name] === undefined);
    if (missing.length) throw new UsageError(`missing ${missing.map((f) => `--${kebab(f.name)}`).join(", ")}`, where);
    const required = command.positionals.filter((p) => p.required);
    if (!command.tool && parsed.positionals.length < required.length) throw new UsageError(`missing ${required.map((p) => `<${p.name}>`).join(" ")}`, where);
    const ctx = createContext(io, globals);
    return await command.run(ctx, parsed);
  } catch (err) {
    return report(io, err, where, jsonErrors, commands);
  }
}

function help(io: Io, commands: Command[], words: string[]): number {
  const exact = commands.find((c) => c.path.join(" ") === words.join(" "));
  if (exact) io.out(commandHelp(exact));
  else if (words.length && commands.some((c) => words.every((w, j) => c.path[j] === w))) io.out(groupHelp(words, commands.filter((c) => words.every((w, j) => c.path[j] === w))));
  else if (words.length) throw new UsageError(`unknown command '${words.join(" ")}'`);
  else io.out(rootHelp(commands));
  return EXIT.ok;
}

/** Maps any failure to a message on stderr and an exit code (docs/cli.md). */
function report(io: Io, err: unknown, where: string | undefined, json: boolean, commands: Command[]): number {
  if (isClosedPipe(err)) return EXIT.ok;
  const emit = (code: string, message: string, extra: Record<string, unknown> = {}, lines: string[] = [], suffix = "") => {
    if (json) io.err(`${JSON.stringify({ error: { code, message, ...extra } })}\n`);
    else io.err(`error: ${message}${suffix}\n${lines.map((l) => `${l}\n`).join("")}`);
  };
  if (err instanceof UsageError) {
    const at = err.command ?? where;
    emit("usage_error", err.message, {}, [`Run 'media ${at ? `${at} ` : ""}--help' for usage.`]);
    return EXIT.usage;
  }
  if (err instanceof NotConfigured) {
    emit("not_configured", err.message);
    return EXIT.auth;
  }
  if (err instanceof Interrupted) {
    emit("interrupted", `interrupted: ${err.message}; run the same command again to resume`);
    return EXIT.interrupted;
  }
  if (err instanceof ApiError) {
    const command = commands.find((c) => c.path.join(" ") === where);
    const lines: string[] = [];
    if (Array.isArray(err.details)) {
      for (const d of err.details as { path?: string; message?: string }[]) {
        if (!d?.message) continue;
        lines.push(`  ${fieldLabel(d.path ?? "", command)}: ${d.message}`);
      }
    }
    if (err.code === "unauthorized") lines.push("  The service refused the API key: check it with `media login`, MEDIA_API_KEY or --api-key.");
    if (err.code === "forbidden") lines.push("  The API key lacks the scope (or bucket) for this: see `media me get`.");
    const ref = [err.code, err.status ? `HTTP ${err.status}` : null, err.requestId ? `request ${err.requestId}` : null].filter(Boolean).join(", ");
    const extra = { ...(err.details !== undefined ? { details: err.details } : {}), ...(err.requestId ? { requestId: err.requestId } : {}), ...(err.status ? { status: err.status } : {}) };
    emit(err.code, err.message, extra, lines, ` (${ref})`);
    return exitCodeOf(err);
  }
  if (err instanceof StorageError) {
    emit(err.code, err.message);
    return EXIT.error;
  }
  const e = err as Error;
  emit("internal_error", e?.message ?? String(err));
  if (io.env.MEDIA_DEBUG && e?.stack) io.err(`${e.stack}\n`);
  return EXIT.error;
}

/** A validation path as the user typed it: `<id>` for an argument, `--bucket-id` for a flag. */
function fieldLabel(path: string, command: Command | undefined): string {
  if (!path) return "input";
  const [head, ...tail] = path.split(".");
  // A path parameter is only an argument; a field that may also be the argument is named as its flag.
  const label = command?.positionals.some((p) => p.name === head && p.required) ? `<${head}>` : `--${kebab(head!)}`;
  return tail.length ? `${label} (${tail.join(".")})` : label;
}
