import { type AnyTool, inputLocation, pathParams } from "../tools/define.ts";
import { inputJsonSchema, type JsonSchema } from "../tools/json-schema.ts";
import { readJsonObject } from "../http/body.ts";

/**
 * One input object for a tool from a REST request: path parameters, plus the query string
 * (GET, DELETE) or the JSON body (POST, PUT). Query strings are turned into numbers,
 * booleans and arrays where the tool's schema asks for them; Zod then validates it all.
 */
export async function gatherInput(
  tool: AnyTool,
  request: Request,
  url: URL,
  params: Record<string, string>,
  maxBodyBytes: number,
): Promise<Record<string, unknown>> {
  const fromPath: Record<string, string> = {};
  for (const name of pathParams(tool.http.path)) {
    const value = params[name];
    if (value !== undefined) fromPath[name] = safeDecode(value);
  }
  const rest = inputLocation(tool) === "query" ? queryInput(tool, url) : await readJsonObject(request, maxBodyBytes);
  return { ...rest, ...fromPath };
}

function queryInput(tool: AnyTool, url: URL): Record<string, unknown> {
  const properties = inputJsonSchema(tool).properties ?? {};
  const out: Record<string, unknown> = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    out[name] = coerce(properties[name], values);
  }
  return out;
}

function coerce(schema: JsonSchema | undefined, values: string[]): unknown {
  const type = typeOf(schema);
  if (type === "array") return values.flatMap((v) => v.split(",")).filter((v) => v !== "").map((v) => coerce(schema?.items, [v]));
  const value = values[values.length - 1]!;
  if ((type === "integer" || type === "number") && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value.trim())) return Number(value);
  if (type === "boolean" && (value === "true" || value === "false")) return value === "true";
  // Left as a string: the schema reports a clear type error.
  return value;
}

function typeOf(schema: JsonSchema | undefined): string | undefined {
  if (!schema) return undefined;
  if (typeof schema.type === "string") return schema.type;
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== "null");
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  return variants?.map(typeOf).find((t) => t !== undefined && t !== "null");
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
