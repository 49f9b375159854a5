import { describe, expect, test } from "bun:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Credential } from "../../tools/access.ts";
import { toolsFor } from "../../tools/access.ts";
import { describeTools } from "../../mcp/server.ts";
import { registry } from "../../tools/registry.ts";
import { ALL_TOOLS, DEFAULT_SELECTION, selectTools, TOOLSET_NAMES, toolsetOf, type ToolSelection } from "../../tools/toolsets.ts";

/**
 * What tools/list costs an agent, and whether popular clients can read it. The budget is the
 * issue's: an admin key's default listing at most 40 KB (about 10k tokens at 4 bytes a token).
 * bench/RESULTS.md records the numbers this prints.
 */
const listing = (credential: Credential, selection: ToolSelection) => ({ tools: describeTools(selectTools(toolsFor(registry, credential), selection)) });
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

const admin: Credential = { scopes: new Set(["admin"]), bucketId: null };
const write: Credential = { scopes: new Set(["read", "write"]), bucketId: null };
const read: Credential = { scopes: new Set(["read"]), bucketId: null };
const restricted: Credential = { scopes: new Set(["read", "write", "delete"]), bucketId: "00000000-0000-4000-8000-000000000000" };

describe("tools/list size", () => {
  test("an admin key's default listing fits in 40 KB", () => {
    const size = bytes(listing(admin, DEFAULT_SELECTION));
    console.log(`admin default: ${size} bytes, ~${Math.round(size / 4)} tokens`);
    expect(size).toBeLessThanOrEqual(40 * 1024);
  });

  test("every toolset and scope, for the record (bench/RESULTS.md)", () => {
    const rows: string[] = [];
    for (const [name, credential] of Object.entries({ admin, write, read, restricted })) {
      for (const [which, selection] of Object.entries({ default: DEFAULT_SELECTION, all: ALL_TOOLS })) {
        const l = listing(credential, selection);
        rows.push(`${name} ${which}: ${l.tools.length} tools, ${bytes(l)} bytes, ~${Math.round(bytes(l) / 4)} tokens`);
      }
    }
    for (const set of TOOLSET_NAMES) {
      const l = listing(admin, { toolsets: [set], readOnly: false });
      rows.push(`toolset ${set}: ${l.tools.length} tools, ${bytes(l)} bytes, ~${Math.round(bytes(l) / 4)} tokens`);
    }
    console.log(rows.join("\n"));
    // Everything together stays far below the 149 KB of 55 tools this replaced.
    expect(bytes(listing(admin, ALL_TOOLS))).toBeLessThanOrEqual(110 * 1024);
  });

  test("every tool belongs to one toolset", () => {
    expect(registry.filter((t) => toolsetOf(t) === null).map((t) => t.name)).toEqual([]);
  });
});

/** Constructs some clients refuse or misread (the inspector's --strict warnings, OpenAI's and Gemini's function schemas). */
function portabilityProblems(schema: unknown, path = ""): string[] {
  if (Array.isArray(schema)) return schema.flatMap((s, i) => portabilityProblems(s, `${path}/${i}`));
  if (!schema || typeof schema !== "object") return [];
  const s = schema as Record<string, unknown>;
  const out: string[] = [];
  if (Array.isArray(s.type)) out.push(`${path}: type array ${JSON.stringify(s.type)}`);
  if (s.additionalProperties && typeof s.additionalProperties === "object" && Object.keys(s.additionalProperties).length === 0) out.push(`${path}: empty additionalProperties schema`);
  if ("propertyNames" in s) out.push(`${path}: propertyNames`);
  if ("nullable" in s) out.push(`${path}: nullable (OpenAPI, not JSON Schema)`);
  if (typeof s.$ref === "string" && !s.$ref.startsWith("#/$defs/")) out.push(`${path}: $ref outside the schema (${s.$ref})`);
  if ("$schema" in s || "$id" in s) out.push(`${path}: $schema or $id`);
  if (typeof s.format === "string" && "pattern" in s) out.push(`${path}: pattern beside format`);
  if (s.minimum === -Number.MAX_SAFE_INTEGER || s.maximum === Number.MAX_SAFE_INTEGER) out.push(`${path}: safe-integer bound`);
  for (const [k, v] of Object.entries(s)) if (k !== "enum" && k !== "required" && k !== "default") out.push(...portabilityProblems(v, `${path}/${k}`));
  return out;
}

describe("tools/list portability", () => {
  const tools = listing(admin, ALL_TOOLS).tools;

  test("no construct popular clients stumble on, in any input or output schema", () => {
    const problems = tools.flatMap((t) => [
      ...portabilityProblems(t.inputSchema).map((p) => `${t.name} input${p}`),
      ...portabilityProblems(t.outputSchema).map((p) => `${t.name} output${p}`),
    ]);
    expect(problems).toEqual([]);
  });

  test("every tool has a title, a description, annotations, an object input and output schema", () => {
    for (const t of tools) {
      expect(t.title?.length).toBeGreaterThan(0);
      expect(t.description?.length).toBeGreaterThan(20);
      expect(t.inputSchema.type).toBe("object");
      expect(t.outputSchema?.type).toBe("object");
      expect(typeof t.annotations?.readOnlyHint).toBe("boolean");
    }
  });

  test("every schema compiles in a draft 2020-12 validator, as the SDK client's does", () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const t of tools) {
      expect(() => ajv.compile(t.inputSchema)).not.toThrow();
      expect(() => ajv.compile(t.outputSchema!)).not.toThrow();
    }
  });

  test("a large resource is described once per listing; the others point at it", () => {
    const get = tools.find((t) => t.name === "media_get")!;
    expect(Object.keys(get.outputSchema!.properties!)).toContain("thumbnail");
    const list = tools.find((t) => t.name === "media_list")!;
    expect((list.outputSchema!.properties!.data as { items: unknown }).items).toEqual({ type: "object", description: "MediaObject (media_get's outputSchema)" });
    // Without media_get in the listing, the first tool that has the object describes it in full.
    const alone = describeTools(registry.filter((t) => t.name === "media_list"));
    expect(JSON.stringify(alone[0]!.outputSchema)).toContain("thumbnail");
  });
});
