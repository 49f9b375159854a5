import { readFileSync } from "node:fs";
import type { JsonSchema } from "../tools/json-schema.ts";

/**
 * Flags for every command, from one description: tool commands get theirs from the tool's
 * input JSON Schema, built-in commands (upload, login, ...) write theirs by hand.
 */

export type FlagType = "string" | "integer" | "number" | "boolean" | "json" | "size";

export interface FlagSpec {
  /** The input field (camelCase); the flag is its kebab-case form, the field name also works. */
  name: string;
  type: FlagType;
  /** An array of `type`: comma-separated values or a repeated flag. */
  list?: boolean;
  enum?: readonly string[];
  required?: boolean;
  nullable?: boolean;
  description?: string;
  default?: unknown;
  short?: string;
  /** Shown in help instead of the type (`<file>`). */
  placeholder?: string;
  /** Accepted but not listed in help (path parameters given as flags). */
  hidden?: boolean;
}

export interface PositionalSpec {
  name: string;
  description?: string;
  required: boolean;
  variadic?: boolean;
}

export interface ParsedArgs {
  positionals: string[];
  /** By field name, converted to the flag's type. */
  values: Record<string, unknown>;
}

/** Bad command line: exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose help to point at, e.g. "buckets create". */
    readonly command?: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

export const kebab = (field: string) => field.replace(/([a-z0-9])([A-Z])/g, "$1-$2").replace(/_/g, "-").toLowerCase();
export const flagOf = (spec: Pick<FlagSpec, "name">) => `--${kebab(spec.name)}`;

// ---------------------------------------------------------------------------------------
// From JSON Schema

function nonNull(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants) {
    const rest = variants.filter((v) => v.type !== "null");
    const nullable = rest.length < variants.length;
    if (rest.length === 1) return { schema: { ...rest[0]!, description: schema.description ?? rest[0]!.description, default: schema.default ?? rest[0]!.default }, nullable };
    return { schema: { ...schema, anyOf: rest }, nullable };
  }
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((t) => t !== "null");
    return { schema: { ...schema, type: types.length === 1 ? types[0] : types }, nullable: types.length < schema.type.length };
  }
  return { schema, nullable: false };
}

function scalar(schema: JsonSchema): Pick<FlagSpec, "type" | "enum"> | null {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === "string")) return { type: "string", enum: schema.enum as string[] };
  if (typeof schema.const === "string") return { type: "string", enum: [schema.const] };
  switch (schema.type) {
    case "string":
      return { type: "string" };
    case "integer":
      return { type: "integer" };
    case "number":
      return { type: "number" };
    case "boolean":
      return { type: "boolean" };
    default:
      return null;
  }
}

/** One flag per property of an object schema, except the given ones (path parameters). */
export function flagsFromSchema(schema: JsonSchema, except: readonly string[] = []): FlagSpec[] {
  const required = new Set(schema.required ?? []);
  const out: FlagSpec[] = [];
  for (const [name, raw] of Object.entries(schema.properties ?? {})) {
    if (except.includes(name)) continue;
    const { schema: s, nullable } = nonNull(raw);
    const spec: FlagSpec = { name, type: "json", nullable, description: describeSchema(s) };
    if (s.format === "uuid") spec.placeholder = "uuid";
    if (s.default !== undefined) spec.default = s.default;
    // Zod marks fields with defaults as required in input schemas only when they have none.
    if (required.has(name) && s.default === undefined) spec.required = true;
    const direct = scalar(s);
    if (direct) Object.assign(spec, direct);
    else if (s.type === "array" && s.items) {
      const item = scalar(nonNull(s.items).schema);
      if (item && item.type !== "boolean") Object.assign(spec, item, { list: true });
    }
    out.push(spec);
  }
  return out;
}

function describeSchema(s: JsonSchema): string {
  const parts: string[] = [];
  if (typeof s.description === "string") parts.push(s.description);
  const bounds = (lo: unknown, hi: unknown, unit: string) => {
    if (lo !== undefined && hi !== undefined) return `${lo}..${hi}${unit}`;
    if (lo !== undefined) return `at least ${lo}${unit}`;
    if (hi !== undefined) return `at most ${hi}${unit}`;
    return null;
  };
  const text = typeof s.description === "string" ? s.description : "";
  if (s.format === "uuid" && !/uuid/i.test(text)) parts.push("UUID");
  // Zod writes the safe-integer limits for unbounded integers: not worth showing.
  const finite = (n: unknown) => (typeof n === "number" && Math.abs(n) < Number.MAX_SAFE_INTEGER ? n : undefined);
  const range = bounds(finite(s.minimum), finite(s.maximum), "");
  if (range && !text.includes("..")) parts.push(range);
  if (s.type === "string") {
    const len = bounds(s.minLength, s.maxLength, " characters");
    if (len && s.format !== "uuid" && !s.enum && !text) parts.push(len);
  }
  if (typeof s.pattern === "string" && !text) parts.push(`matching ${s.pattern}`);
  if (s.type === "array") {
    const n = bounds(s.minItems, s.maxItems, " items");
    if (n && !text) parts.push(n);
  }
  return parts.join("; ");
}

// ---------------------------------------------------------------------------------------
// Parsing

const SIZE_UNITS: Record<string, number> = { "": 1, b: 1, k: 1024, kb: 1000, kib: 1024, m: 1024 ** 2, mb: 1000 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1000 ** 3, gib: 1024 ** 3, t: 1024 ** 4, tb: 1000 ** 4, tib: 1024 ** 4 };

/** "16MiB", "16M" (binary), "16MB" (decimal), "1048576". */
export function parseSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  if (!m) return null;
  const unit = SIZE_UNITS[m[2]!.toLowerCase()];
  if (unit === undefined) return null;
  const n = Math.round(Number(m[1]) * unit);
  return Number.isSafeInteger(n) ? n : null;
}

function convert(spec: FlagSpec, raw: string, flag: string): unknown {
  if (spec.nullable && raw === "null") return null;
  switch (spec.type) {
    case "string":
      if (spec.enum && !spec.enum.includes(raw)) {
        throw new UsageError(`${flag} must be one of ${spec.enum.join(", ")} (got '${raw}')${hint(raw, spec.enum)}`);
      }
      return raw;
    case "integer":
    case "number": {
      const t = raw.trim();
      const n = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(t) ? Number(t) : Number.NaN;
      if (Number.isNaN(n)) throw new UsageError(`${flag} expects a number (got '${raw}')`);
      if (spec.type === "integer" && !Number.isInteger(n)) throw new UsageError(`${flag} expects a whole number (got '${raw}')`);
      return n;
    }
    case "size": {
      const n = parseSize(raw);
      if (n === null) throw new UsageError(`${flag} expects a size such as 16MiB, 8M or 1048576 (got '${raw}')`);
      return n;
    }
    case "boolean":
      if (raw === "true" || raw === "1" || raw === "yes") return true;
      if (raw === "false" || raw === "0" || raw === "no") return false;
      throw new UsageError(`${flag} expects true or false (got '${raw}')`);
    case "json":
      return parseJsonArg(raw, flag);
  }
}

/** A JSON value, or `@file` to read one from a file. */
export function parseJsonArg(raw: string, flag: string): unknown {
  let text = raw;
  if (raw.startsWith("@")) {
    try {
      text = readFileSync(raw.slice(1), "utf8");
    } catch (err) {
      throw new UsageError(`${flag}: cannot read ${raw.slice(1)}: ${(err as Error).message}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${flag} expects JSON (e.g. '{"a":1}' or @file.json)`);
  }
}

/**
 * Parses flags anywhere among positionals: `--name v`, `--name=v`, `-n v`, `--flag`,
 * `--no-flag`, lists as `--tags a,b` or `--tags a --tags b`, `--` ends the flags.
 */
export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[], command?: string): ParsedArgs {
  const byFlag = new Map<string, FlagSpec>();
  for (const s of specs) {
    byFlag.set(kebab(s.name), s);
    byFlag.set(s.name, s);
    if (s.short) byFlag.set(`-${s.short}`, s);
  }
  const positionals: string[] = [];
  const values: Record<string, unknown> = {};
  const set = (spec: FlagSpec, raw: string, flag: string) => {
    if (spec.list) {
      const items = raw === "" ? [] : raw.split(",").map((v) => v.trim()).filter((v) => v !== "");
      const prev = (values[spec.name] as unknown[] | undefined) ?? [];
      values[spec.name] = [...prev, ...items.map((v) => convert({ ...spec, list: false, nullable: false }, v, flag))];
    } else values[spec.name] = convert(spec, raw, flag);
  };

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-" || /^-\d/.test(arg)) {
      positionals.push(arg);
      continue;
    }
    const long = arg.startsWith("--");
    const eq = arg.indexOf("=");
    const name = long ? arg.slice(2, eq > 0 ? eq : undefined) : arg.slice(0, 2);
    const inline = long ? (eq > 0 ? arg.slice(eq + 1) : undefined) : arg.length > 2 ? arg.slice(2).replace(/^=/, "") : undefined;
    let spec = byFlag.get(name);
    let negated = false;
    if (!spec && long && name.startsWith("no-")) {
      const target = byFlag.get(name.slice(3));
      if (target?.type === "boolean") {
        spec = target;
        negated = true;
      }
    }
    const flag = long ? `--${name}` : name;
    if (!spec) {
      const known = specs.map((s) => kebab(s.name));
      throw new UsageError(`unknown flag ${flag}${hint(name.replace(/^-/, ""), known, "--")}`, command);
    }
    if (spec.type === "boolean") {
      if (negated) {
        if (inline !== undefined) throw new UsageError(`${flag} takes no value`, command);
        values[spec.name] = false;
      } else values[spec.name] = inline === undefined ? true : convert(spec, inline, flag);
      continue;
    }
    let raw = inline;
    if (raw === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`${flag} needs a value`, command);
      raw = argv[++i]!;
    }
    try {
      set(spec, raw, flag);
    } catch (err) {
      if (err instanceof UsageError && !err.command) throw new UsageError(err.message, command);
      throw err;
    }
  }
  return { positionals, values };
}

// ---------------------------------------------------------------------------------------
// Suggestions

function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      // A swap of two neighbours counts as one edit (optimal string alignment).
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  return d[a.length]![b.length]!;
}

/** " (did you mean x?)" when one candidate is close. */
export function hint(input: string, candidates: readonly string[], prefix = ""): string {
  let best: string | null = null;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const score = distance(input.toLowerCase(), c.toLowerCase());
    if (score < bestScore) [best, bestScore] = [c, score];
  }
  return best !== null && bestScore <= Math.max(1, Math.floor(best.length / 3)) ? ` (did you mean ${prefix}${best}?)` : "";
}
