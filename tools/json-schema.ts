import { z } from "zod";
import { DEFAULT_LIMIT, MAX_LIMIT } from "../contract/common.ts";
import type { AnyTool } from "./define.ts";
import { CONTENT_TYPE_PATTERN } from "./inputs.ts";
import { strictInput } from "./invoke.ts";

export type JsonSchema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
};

type Target = "draft-2020-12" | "openapi-3.0";

const cache = new Map<string, JsonSchema>();

/**
 * JSON Schema of a Zod schema, from Zod's own converter (never hand-written). Zod moves the
 * contract's named resources (`meta({ id })`) to definitions and refers to them: OpenAPI keeps
 * those references (they become its components), while the draft-2020-12 schemas MCP clients
 * and the CLI read are self-contained, with each resource written in place.
 */
export function toJsonSchema(schema: z.ZodType, target: Target, io: "input" | "output", cacheKey?: string): JsonSchema {
  const key = cacheKey ? `${cacheKey}|${target}|${io}` : undefined;
  const hit = key ? cache.get(key) : undefined;
  if (hit) return hit;
  let out = z.toJSONSchema(schema, { target, io, unrepresentable: "any" }) as JsonSchema;
  delete out.$schema;
  if (target === "draft-2020-12") out = inlineDefinitions(out);
  if (key) cache.set(key, out);
  return out;
}

export const inputJsonSchema = (tool: AnyTool, target: Target = "draft-2020-12") =>
  toJsonSchema(strictInput(tool), target, "input", `${tool.name}:in`);

export const outputJsonSchema = (tool: AnyTool, target: Target = "draft-2020-12") =>
  toJsonSchema(tool.output, target, "output", `${tool.name}:out`);

/**
 * The schemas MCP's tools/list carries: the same shapes, written for a reader that pays per
 * byte (an agent's context) and for the validators popular clients run. Differences from the
 * draft-2020-12 form above (calls are still validated against the contract's full schema, so
 * what is left out here is only not said twice, or not said to an agent that needs no guard):
 * - no `pattern` next to a `format` (Zod adds its UUID and date-time regexes; the format says it);
 * - no ±2^53-1 bounds (Zod's "safe integer" default; every JSON parser has them anyway);
 * - no `propertyNames: {type: string}` (JSON keys are strings) and no empty `additionalProperties`
 *   schema (the default); `type: [a, "null"]` is written `anyOf` (some clients reject type arrays);
 * - "(UUID)" and "(ISO-8601 UTC)" dropped from descriptions where `format` says so; an input id
 *   field ("Bucket id") carries no format either: the instructions say once that ids are UUIDs;
 * - no `additionalProperties: false` (unknown arguments are still refused, by name);
 * - inputs: every field keeps its description (the model fills the field from it); `limit` and
 *   `offset` of the list convention keep a few words but not its bounds and defaults, which the
 *   instructions state once; caps that only guard the server (strings of 128 characters or
 *   more, numbers of a million or more, "not empty", a MIME type's pattern) are left to
 *   validation and the OpenAPI document;
 * - outputs: descriptions that only repeat a field's name ("Bucket id") are dropped, and the
 *   list convention's `limit`, `offset`, `total` and `hasMore` are described once, in the instructions;
 * - a definition used more than once in a schema (a Label for tags and for categories) stays in
 *   `$defs` and is referred to; one used once is written in place.
 */
export function mcpJsonSchema(tool: AnyTool, io: "input" | "output"): JsonSchema {
  const key = `${tool.name}|mcp|${io}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const raw = z.toJSONSchema(io === "input" ? strictInput(tool) : tool.output, { target: "draft-2020-12", io, unrepresentable: "any" }) as JsonSchema;
  delete raw.$schema;
  const out = compact(raw, io) as JsonSchema;
  if (io === "input") idsInWords(out);
  cache.set(key, out);
  return out;
}

/**
 * An input field that is an id says so in words ("Bucket id") and carries no `format: uuid`:
 * the instructions say once that ids are UUIDs (tools/registry.ts), as they state the paging
 * bounds, and an id is only ever copied from an earlier answer. Sixteen bytes on each of some
 * 80 fields. Array items and nullable branches keep their `format` (their description is the
 * field's); the full schema keeps it everywhere, and a malformed id is a validation_error.
 */
function idsInWords(schema: JsonSchema): void {
  for (const field of Object.values(schema.properties ?? {})) {
    if (field.format === "uuid" && typeof field.description === "string" && / id$/.test(field.description)) delete field.format;
    if (field.properties) idsInWords(field);
  }
}

/** Definitions smaller than this are written out wherever they occur: a pointer would cost as much. */
const DESCRIBE_ONCE_MIN_BYTES = 400;

/**
 * The output schemas of a whole tools/list, each named resource large enough to matter
 * described in full once: in the tool that answers exactly that resource (a `_get` first),
 * else the first tool carrying it. Every other tool that answers or contains it says
 * `{"type": "object", "description": "MediaObject (media_get's outputSchema)"}`, so the listing
 * as a whole still states every field once. The listing decides, since a toolset may leave the
 * describing tool out: then the next tool in the listing carries the full definition.
 */
export function mcpOutputSchemas(tools: readonly AnyTool[]): Map<string, JsonSchema> {
  const raw = tools.map((t) => [t, mcpJsonSchema(t, "output")] as const);
  const defsOf = (s: JsonSchema) => (s.$defs ?? {}) as Record<string, JsonSchema>;
  const rootName = (s: JsonSchema) => (typeof s.$ref === "string" && s.$ref.startsWith(DEFS) ? s.$ref.slice(DEFS.length) : null);
  const describer = new Map<string, string>();
  const candidates = (name: string) => raw.filter(([, s]) => name in defsOf(s));
  for (const [, s] of raw) {
    for (const [name, body] of Object.entries(defsOf(s))) {
      if (describer.has(name) || JSON.stringify(body).length < DESCRIBE_ONCE_MIN_BYTES) continue;
      const all = candidates(name);
      const answers = all.filter(([, c]) => rootName(c) === name);
      const chosen = answers.find(([t]) => t.name.endsWith("_get")) ?? answers[0] ?? all[0]!;
      describer.set(name, chosen[0].name);
    }
  }
  const out = new Map<string, JsonSchema>();
  for (const [tool, schema] of raw) {
    const pointer = (name: string): JsonSchema | null => {
      const by = describer.get(name);
      return by && by !== tool.name ? { type: "object", description: `${name} (${by}'s outputSchema)` } : null;
    };
    const swap = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(swap);
      if (!value || typeof value !== "object") return value;
      const { $ref, ...rest } = value as Record<string, unknown>;
      if (typeof $ref === "string" && $ref.startsWith(DEFS)) {
        const p = pointer($ref.slice(DEFS.length));
        if (p) return { ...p, ...rest };
      }
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, swap(v)]));
    };
    out.set(tool.name, shareDefinitions(swap(schema) as JsonSchema));
  }
  return out;
}

const SAFE = Number.MAX_SAFE_INTEGER;
const GUARD_LENGTH = 128;
const GUARD_NUMBER = 1_000_000;

/** An id's description that only names its noun ("Bucket id"), or a short one on a `...At` time: the name says it. */
const SAYS_ONLY_ITS_NAME = /^[A-Z][a-z]*( [a-z]+)* id( \(UUID\))?$/;
const SHORT_TIME = /^[A-Z][a-z]*( [a-z]+){0,2}( \(ISO-8601 UTC\))?$/;

/** The list convention's fields: described once, in the server's instructions (tools/registry.ts). */
const PAGING = new Set(["limit", "offset", "total", "hasMore"]);

/**
 * An input's `limit` and `offset` as the list convention has them (the instructions state the
 * bounds and defaults once): then each keeps its type and a few words, not the numbers again.
 * A list with other bounds (billing_invoices_list) keeps its own.
 */
function isConventionalPaging(name: string, o: Record<string, unknown>): boolean {
  if (name === "limit") return o.default === DEFAULT_LIMIT && o.minimum === 1 && o.maximum === MAX_LIMIT;
  if (name === "offset") return o.default === 0 && o.minimum === 0 && o.maximum === undefined;
  return false;
}

function compact(value: unknown, io: "input" | "output", name = ""): unknown {
  if (Array.isArray(value)) return value.map((v) => compact(v, io, name));
  if (!value || typeof value !== "object") return value;
  const o: Record<string, unknown> = Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === "properties" && v && typeof v === "object"
        ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, compact(s, io, p)]))
        : compact(v, io, k === "anyOf" || k === "items" ? name : ""),
    ]),
  );
  // An input keeps every description: it is what the model fills the field from.
  if (io === "output" && typeof o.description === "string") {
    if (PAGING.has(name)) delete o.description;
    else if (o.format === "uuid" && SAYS_ONLY_ITS_NAME.test(o.description)) delete o.description;
    else if (o.format === "date-time" && name.endsWith("At") && SHORT_TIME.test(o.description)) delete o.description;
  }
  // An answer's objects are closed by construction; saying so again in every object costs bytes
  // and would make a client that validates break when a field is added. An input's are closed
  // too (strictInput), and the server says so where it matters: an unknown argument is a
  // validation_error naming it. Some function-calling APIs (Gemini's) refuse the keyword anyway.
  if (o.type === "object" && o.additionalProperties === false) delete o.additionalProperties;
  if (typeof o.format === "string" && "pattern" in o) delete o.pattern;
  if (o.minimum === -SAFE) delete o.minimum;
  if (o.maximum === SAFE) delete o.maximum;
  // Caps that only guard the server (a 2,048-character URL, a billion seconds) guide no agent:
  // validation keeps them, a value past one is a validation_error naming the field, and the
  // OpenAPI document states them.
  if (io === "input" && typeof o.maxLength === "number" && o.maxLength >= GUARD_LENGTH) delete o.maxLength;
  // Nor do floors a field's meaning already has (an empty name, a negative size, a width of
  // 0): such a value is refused, naming the field. A floor with a ceiling stays (partNumber 1..10000).
  if (io === "input" && o.minLength === 1) delete o.minLength;
  // A MIME type's pattern keeps control characters out of a signed header; "MIME type" says the rest.
  if (io === "input" && o.pattern === CONTENT_TYPE_PATTERN.source) {
    delete o.pattern;
    delete o.minLength;
  }
  if (io === "input" && typeof o.maximum === "number" && o.maximum >= GUARD_NUMBER) delete o.maximum;
  if (io === "input" && isConventionalPaging(name, o)) {
    delete o.default;
    delete o.minimum;
    delete o.maximum;
  }
  // After the caps above: a floor whose ceiling was a guard goes too.
  if (io === "input" && (o.minimum === 0 || (o.minimum === 1 && o.maximum === undefined))) delete o.minimum;
  // propertyNames is little supported; a key length limit is said in words instead.
  // Read before compaction, which drops a minimum length of 1 from inputs.
  const names = (value as Record<string, unknown>).propertyNames as Record<string, unknown> | undefined;
  if (names) {
    delete o.propertyNames;
    if (typeof names.maxLength === "number") {
      const limit = `Keys: ${names.minLength ?? 0}..${names.maxLength} characters.`;
      o.description = typeof o.description === "string" ? `${o.description}. ${limit}` : limit;
    }
  }
  // An array's items and a nullable's branch are what the field's own description says.
  if (io === "input" && typeof o.description === "string") {
    const items = o.items as Record<string, unknown> | undefined;
    if (items && !items.properties) delete items.description;
    for (const branch of (o.anyOf ?? []) as Record<string, unknown>[]) delete branch.description;
  }
  const extra = o.additionalProperties;
  if (extra && typeof extra === "object" && Object.keys(extra).length === 0) delete o.additionalProperties;
  if (typeof o.description === "string" && (o.format === "uuid" || o.format === "date-time")) {
    o.description = o.description.replace(/ \((UUID|ISO-8601 UTC)\)$/, "");
  }
  if (Array.isArray(o.type)) {
    const { type, description, ...rest } = o as { type: string[]; description?: string };
    return { ...(description ? { description } : {}), anyOf: type.map((t) => (t === "null" ? { type: "null" } : { type: t, ...rest })) };
  }
  return o;
}

const DEFS = "#/$defs/";

function refCounts(value: unknown, into = new Map<string, number>()): Map<string, number> {
  if (Array.isArray(value)) for (const v of value) refCounts(v, into);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string" && v.startsWith(DEFS)) into.set(v.slice(DEFS.length), (into.get(v.slice(DEFS.length)) ?? 0) + 1);
      else refCounts(v, into);
    }
  }
  return into;
}

/** Writes in place each definition referred to once (repeatedly, as inlining can make counts fall); keeps the rest in $defs. */
function shareDefinitions(schema: JsonSchema): JsonSchema {
  let { $defs, ...root } = schema as JsonSchema & { $defs?: Record<string, JsonSchema> };
  let defs = { ...($defs ?? {}) };
  for (;;) {
    const counts = refCounts([root, defs]);
    const once = Object.keys(defs).find((name) => (counts.get(name) ?? 0) <= 1 && !refCounts(defs[name]).has(name));
    if (once === undefined) break;
    const body = defs[once]!;
    const { [once]: _, ...others } = defs;
    const replace = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(replace);
      if (!value || typeof value !== "object") return value;
      const { $ref, ...rest } = value as Record<string, unknown>;
      if ($ref === DEFS + once) return { ...body, ...rest };
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replace(v)]));
    };
    root = replace(root) as JsonSchema;
    defs = replace(others) as Record<string, JsonSchema>;
  }
  return { ...root, ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}) };
}

/** Writes every `$defs` entry in place of its references, except one that refers to itself (a tree): that stays a reference. */
function inlineDefinitions(schema: JsonSchema): JsonSchema {
  const { $defs, ...root } = schema;
  const defs = ($defs ?? {}) as Record<string, JsonSchema>;
  if (Object.keys(defs).length === 0) return schema;
  const refsIn = (value: unknown, into = new Set<string>()): Set<string> => {
    if (Array.isArray(value)) for (const v of value) refsIn(v, into);
    else if (value && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        if (k === "$ref" && typeof v === "string" && v.startsWith(DEFS)) into.add(v.slice(DEFS.length));
        else refsIn(v, into);
      }
    }
    return into;
  };
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean => {
    for (const next of refsIn(defs[from])) {
      if (next === to) return true;
      if (!seen.has(next)) {
        seen.add(next);
        if (reaches(next, to, seen)) return true;
      }
    }
    return false;
  };
  const recursive = new Set(Object.keys(defs).filter((name) => reaches(name, name)));
  const inline = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(inline);
    if (!value || typeof value !== "object") return value;
    const { $ref, ...rest } = value as Record<string, unknown>;
    const name = typeof $ref === "string" && $ref.startsWith(DEFS) ? $ref.slice(DEFS.length) : null;
    if (name !== null && !recursive.has(name)) return inline({ ...defs[name], ...rest });
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v)]));
  };
  const kept = Object.fromEntries([...recursive].map((name) => [name, inline(defs[name])]));
  return { ...(inline(root) as JsonSchema), ...(recursive.size > 0 ? { $defs: kept } : {}) };
}
