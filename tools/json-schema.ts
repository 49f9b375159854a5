import { z } from "zod";
import type { AnyTool } from "./define.ts";
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

const DEFS = "#/$defs/";

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
