import { pathParams } from "../tools/define.ts";
import { type Command, GLOBAL_FLAGS } from "./context.ts";
import { type FlagSpec, flagOf } from "./flags.ts";
import { VERSION } from "./version.ts";

/** Help at every level, generated from the commands (and so from the tools' titles, descriptions and schemas). */

const WIDTH = Math.min(100, Math.max(60, process.stdout.columns ?? 100));

function wrap(text: string, indent = 0, width = WIDTH): string {
  const out: string[] = [];
  for (const paragraph of text.split("\n")) {
    let line = "";
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line && indent + line.length + 1 + word.length > width) {
        out.push(" ".repeat(indent) + line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    out.push(" ".repeat(indent) + line);
  }
  return out.join("\n");
}

function twoColumns(rows: [string, string][], indent = 2): string {
  const left = Math.min(34, Math.max(...rows.map(([l]) => l.length)) + 2);
  return rows
    .map(([l, r]) => {
      if (!r) return `${" ".repeat(indent)}${l}`;
      const body = wrap(r, indent + left).trimStart();
      return l.length + 2 > left ? `${" ".repeat(indent)}${l}\n${" ".repeat(indent + left)}${body}` : `${" ".repeat(indent)}${l.padEnd(left)}${body}`;
    })
    .join("\n");
}

function valueOf(f: FlagSpec): string {
  if (f.type === "boolean") return "";
  let v = f.placeholder ?? (f.enum ? f.enum.join("|") : f.type === "json" ? "json" : f.type);
  if (f.list) v = `${v},...`;
  return ` <${v}>`;
}

function flagLabel(f: FlagSpec): string {
  return `${f.short ? `-${f.short}, ` : ""}${flagOf(f)}${valueOf(f)}`;
}

function flagText(f: FlagSpec): string {
  const parts: string[] = [];
  if (f.required) parts.push("Required.");
  if (f.description) parts.push(f.description.endsWith(".") ? f.description : `${f.description}.`);
  if (f.list) parts.push("Comma-separated, or repeat the flag.");
  if (f.type === "json" && !f.placeholder?.includes("json")) parts.push("JSON, or @file.json.");
  const documented = /default/i.test(f.description ?? "");
  if (f.type === "boolean" && f.default === true && !f.description?.includes("--no-")) parts.push(`(default true; ${flagOf(f).replace("--", "--no-")} turns it off)`);
  else if (f.default !== undefined && f.default !== false && !documented) parts.push(`(default ${typeof f.default === "string" ? f.default : JSON.stringify(f.default)})`);
  return parts.join(" ");
}

function usageLine(c: Command): string {
  const args = c.positionals.map((p) => (p.variadic ? `<${p.name}...>` : `<${p.name}>`));
  // A field that may come as the argument (`media search <q>`) is not repeated as a required flag.
  const asArgument = new Set(c.positionals.map((p) => p.name));
  const required = c.flags.filter((f) => f.required && !f.hidden && !asArgument.has(f.name)).map((f) => `${flagOf(f)}${valueOf(f)}`);
  return ["media", ...c.path, ...args, ...required, "[flags]"].join(" ");
}

const EXIT_CODES = "0 success; 1 error; 2 usage error or invalid input; 3 not configured, unauthorized or forbidden; 4 not found; 130 interrupted.";

export function commandHelp(c: Command): string {
  const lines: string[] = [`${c.title}`, "", wrap(c.description), "", "Usage:", `  ${usageLine(c)}`];
  if (c.positionals.length) {
    lines.push("", "Arguments:", twoColumns(c.positionals.map((p) => [`<${p.name}>`, p.description ?? ""])));
  }
  const flags = c.flags.filter((f) => !f.hidden);
  if (flags.length) lines.push("", "Flags:", twoColumns(flags.map((f) => [flagLabel(f), flagText(f)])));
  lines.push("", "Global flags:", twoColumns(GLOBAL_FLAGS.map((f) => [flagLabel(f), f.description ?? ""])));
  if (c.tool) {
    const t = c.tool;
    lines.push("", `Tool: ${t.name} (scope ${t.scope}; ${t.http.method} /api${t.http.path}). Path parameters are arguments; other fields are flags.`);
  }
  if (c.notes) lines.push("", c.notes);
  return `${lines.join("\n")}\n`;
}

function commandRow(c: Command): [string, string] {
  // Path parameters name a tool command's arguments; no need to build its flags for a listing.
  const positionals = c.tool ? pathParams(c.tool.http.path).map((name) => ({ name, variadic: false })) : c.positionals;
  const args = positionals.map((p) => (p.variadic ? `<${p.name}...>` : `<${p.name}>`)).join(" ");
  return [`${c.path.join(" ")}${args ? ` ${args}` : ""}`, c.tool ? `${c.title} (${c.tool.name})` : c.title];
}

export function groupHelp(prefix: string[], commands: Command[]): string {
  const lines = [`media ${prefix.join(" ")}: ${commands.length} commands`, "", "Commands:", twoColumns(commands.map(commandRow))];
  lines.push("", `Run \`media ${prefix.join(" ")} <command> --help\` for a command's arguments and flags.`);
  return `${lines.join("\n")}\n`;
}

export function rootHelp(commands: Command[]): string {
  const section = (name: Command["section"]) => twoColumns(commands.filter((c) => c.section === name).map(commandRow));
  const lines = [
    `media ${VERSION}: command-line client for the media storage service`,
    "",
    "Usage:",
    "  media <command> [arguments] [flags]",
    "",
    "Transfer:",
    section("transfer"),
    "",
    "Setup:",
    section("setup"),
    "",
    "Service API (one command per tool of the service; `media <tool_name>` works too):",
    section("api"),
    "",
    "Global flags:",
    twoColumns(GLOBAL_FLAGS.map((f) => [flagLabel(f), f.description ?? ""])),
    "",
    wrap(
      "Configuration: `media login` saves a profile; --url/--api-key flags, then --profile, then MEDIA_URL/MEDIA_API_KEY, then MEDIA_PROFILE or the default profile decide which service and key are used.",
    ),
    "",
    wrap(`Exit codes: ${EXIT_CODES}`),
    "",
    "Run `media <command> --help` for details.",
  ];
  return `${lines.join("\n")}\n`;
}
