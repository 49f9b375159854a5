import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { openApiDocument } from "../../openapi/document.ts";
import { inputJsonSchema, outputJsonSchema } from "../../tools/json-schema.ts";
import { registry } from "../../tools/registry.ts";

/**
 * contract/ holds each resource's shape once. Tools answer with those schemas, so a named one
 * is an OpenAPI component every operation refers to, while MCP and the CLI get each schema
 * whole (only a recursive shape stays a reference).
 */
const dir = join(import.meta.dir, "../../contract");
const files = readdirSync(dir).filter((f) => f.endsWith(".ts"));

const named = new Map<z.ZodType, string>();
for (const file of files) {
  for (const value of Object.values(await import(join(dir, file)))) {
    const id = value instanceof z.ZodType ? z.globalRegistry.get(value)?.id : undefined;
    if (id) named.set(value as z.ZodType, id);
  }
}

const doc = openApiDocument(registry) as {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
  components: { schemas: Record<string, unknown> };
};

function refsIn(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsIn(v, into);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") into.push(v);
      else refsIn(v, into);
    }
  }
  return into;
}

describe("one contract per noun", () => {
  test("contract files import only zod and each other", () => {
    for (const file of files) {
      const imports = [...readFileSync(join(dir, file), "utf8").matchAll(/\bfrom\s+["']([^"']+)["']/g)].map((m) => m[1]!);
      for (const target of imports) expect(`${file}: ${target}`).toMatch(/: (zod|\.\/[\w-]+\.ts)$/);
    }
  });

  test("resources are named, each name once", () => {
    expect(named.size).toBeGreaterThan(30);
    const ids = [...named.values()];
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[A-Z][A-Za-z]+$/);
  });

  test("a tool answering a named resource is documented with a reference to its component", () => {
    let checked = 0;
    for (const tool of registry) {
      const id = named.get(tool.output);
      if (!id || tool.http.produces || tool.restResponse) continue;
      const op = doc.paths[`/api${tool.http.path}`]![tool.http.method.toLowerCase()]!;
      const schema = op.responses[String(tool.http.status ?? 200)]!.content!["application/json"]!.schema;
      expect({ tool: tool.name, schema }).toEqual({ tool: tool.name, schema: { $ref: `#/components/schemas/${id}` } });
      expect(doc.components.schemas[id]).toBeDefined();
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
  });

  test("every reference in the document names a component", () => {
    const components = (doc as unknown as { components: Record<string, Record<string, unknown>> }).components;
    for (const ref of refsIn(doc)) {
      const [, kind, name] = /^#\/components\/(schemas|parameters)\/(\w+)$/.exec(ref) ?? [];
      expect({ ref, found: kind !== undefined && components[kind]![name!] !== undefined }).toEqual({ ref, found: true });
    }
  });

  test("MCP and CLI schemas are self-contained: the only reference left is the category tree's", () => {
    for (const tool of registry) {
      for (const schema of [inputJsonSchema(tool), outputJsonSchema(tool)]) {
        for (const ref of refsIn(schema)) expect(`${tool.name}: ${ref}`).toBe(`${tool.name}: #/$defs/CategoryNode`);
      }
    }
    expect(outputJsonSchema(registry.find((t) => t.name === "media_get")!).properties?.tags).toMatchObject({ type: "array" });
  });
});
