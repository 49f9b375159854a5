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

/** JSON Schema of a Zod schema, from Zod's own converter (never hand-written). */
export function toJsonSchema(schema: z.ZodType, target: Target, io: "input" | "output", cacheKey?: string): JsonSchema {
  const key = cacheKey ? `${cacheKey}|${target}|${io}` : undefined;
  const hit = key ? cache.get(key) : undefined;
  if (hit) return hit;
  const out = z.toJSONSchema(schema, { target, io, unrepresentable: "any" }) as JsonSchema;
  delete out.$schema;
  if (key) cache.set(key, out);
  return out;
}

export const inputJsonSchema = (tool: AnyTool, target: Target = "draft-2020-12") =>
  toJsonSchema(strictInput(tool), target, "input", `${tool.name}:in`);

export const outputJsonSchema = (tool: AnyTool, target: Target = "draft-2020-12") =>
  toJsonSchema(tool.output, target, "output", `${tool.name}:out`);
