import { z } from "zod";
import type { AnyTool } from "../tools/define.ts";

/**
 * The short text a tool result leads with: a line an agent (or a person reading the
 * transcript) takes in at a glance, derived from the output's shape so that every tool has one
 * without writing it. The full answer stays in structuredContent and in the JSON block after
 * this one (docs/mcp.md#tool-results). A tool whose output a generic line would not say
 * anything useful about gives its own (`mcpSummary` on its definition).
 */
export function summarize(tool: AnyTool, input: Record<string, unknown>, output: Record<string, unknown>): string {
  if (tool.mcpSummary) return truncate(tool.mcpSummary(output as never, input as never));
  const list = listField(tool, output);
  if (list) return listLine(list.noun, list.items, output, input);
  if (output.deleted === true && typeof output.id === "string") return join([`Deleted ${output.id}`, ...extras(output, ["id", "deleted"])]);
  return objectLine(schemaNoun(tool.output) ?? tool.title, output);
}

/** A failed call: the error catalogue's code and message. */
export const errorLine = (code: string, message: string): string => `Error ${code}: ${message}`;

const MAX_LINE = 300;
const join = (parts: string[]) => truncate(parts.filter(Boolean).join("; "));
const truncate = (s: string) => (s.length > MAX_LINE ? `${s.slice(0, MAX_LINE - 1)}…` : s);

/** `data` (or the one array of a search result) with `total` beside it: a page of something. */
function listField(tool: AnyTool, output: Record<string, unknown>): { noun: string; items: unknown[] } | null {
  const shape = tool.output.shape as Record<string, z.ZodType>;
  const name = Array.isArray(output.data) ? "data" : Object.keys(shape).find((k) => Array.isArray(output[k]) && typeof output.total === "number");
  if (!name) return null;
  const field = shape[name];
  const element = field instanceof z.ZodArray ? (field.element as z.ZodType) : undefined;
  const noun = (element && schemaNoun(element)) ?? "item";
  return { noun, items: output[name] as unknown[] };
}

function listLine(noun: string, items: unknown[], output: Record<string, unknown>, input: Record<string, unknown>): string {
  const n = items.length;
  let line = `${n} ${n === 1 ? noun : plural(noun)}`;
  if (typeof output.total === "number") line += ` (of ${output.total}${output.totalRelation === "gte" ? "+" : ""})`;
  if (typeof output.nextCursor === "string") line += `; next cursor ${output.nextCursor}`;
  else if (output.hasMore === true) line += `; more from offset ${(typeof input.offset === "number" ? input.offset : 0) + n}`;
  const first = items.slice(0, 3).map((i) => (i && typeof i === "object" ? label(i as Record<string, unknown>) : null)).filter(Boolean);
  if (first.length) line += `: ${first.join(", ")}${n > first.length ? ", …" : ""}`;
  return truncate(line);
}

/** What names a thing, for lists: its name, key or slug, else its id. */
function label(o: Record<string, unknown>): string | null {
  for (const k of ["name", "key", "slug", "email", "url", "id"]) if (typeof o[k] === "string" && o[k]) return String(o[k]);
  return null;
}

/** The fields that say what an object is, in the order a person would read them. */
const NAMING = ["name", "key", "slug", "fileName"];
const DESCRIBING = ["kind", "contentType", "state", "status", "plan", "role", "variant", "eventType"];
const IDS = ["id", "objectId", "setId", "bucketId"];

function objectLine(noun: string, o: Record<string, unknown>): string {
  const parts: string[] = [];
  const naming = NAMING.find((k) => typeof o[k] === "string" && o[k]);
  let head = capitalize(noun);
  if (naming) head += ` ${JSON.stringify(o[naming])}`;
  const described = DESCRIBING.filter((k) => typeof o[k] === "string" && o[k]).map((k) => String(o[k]));
  if (typeof o.size === "number") described.push(formatBytes(o.size));
  if (typeof o.width === "number" && typeof o.height === "number") described.push(`${o.width}x${o.height}`);
  if (described.length) head += ` (${described.join(", ")})`;
  parts.push(head);
  const error = o.error as { code?: unknown; message?: unknown } | null | undefined;
  if (error && typeof error === "object" && typeof error.code === "string") parts.push(`error ${error.code}: ${String(error.message ?? "")}`);
  const idKey = IDS.find((k) => typeof o[k] === "string");
  if (idKey) parts.push(`${idKey} ${o[idKey]}`);
  // Nothing names it (usage, settings, a subscription): a few of its plain fields say more than the noun.
  if (!naming) parts.push(...extras(o, [...IDS, ...DESCRIBING, "size", "width", "height"]).slice(0, 4));
  return join(parts);
}

/** Plain fields (not ids, objects or long strings) as `name value`. */
function extras(o: Record<string, unknown>, skip: string[]): string[] {
  return Object.entries(o)
    .filter(([k, v]) => !skip.includes(k) && (typeof v === "number" || typeof v === "boolean" || (typeof v === "string" && v.length <= 60)))
    .map(([k, v]) => `${k} ${v}`);
}

/** "MediaObject" → "media object"; a list's or a secret-bearing variant's suffix is dropped. */
function schemaNoun(schema: z.ZodType): string | null {
  const id = z.globalRegistry.get(schema)?.id;
  if (!id) return null;
  const base = id.replace(/(WithSecret|List|Page)$/, "") || id;
  return base
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .replace(/\bapi\b/g, "API");
}

function plural(noun: string): string {
  if (/[^aeiou]y$/.test(noun)) return `${noun.slice(0, -1)}ies`;
  if (/(s|x|ch|sh)$/.test(noun)) return `${noun}es`;
  return `${noun}s`;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}
