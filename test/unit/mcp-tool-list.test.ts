import { describe, expect, test } from "bun:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Credential } from "../../tools/access.ts";
import { toolsFor } from "../../tools/access.ts";
import { describeTools } from "../../mcp/server.ts";
import { inputJsonSchema } from "../../tools/json-schema.ts";
import { INSTRUCTIONS, registry } from "../../tools/registry.ts";
import { ALL_TOOLS, DEFAULT_SELECTION, DEFAULT_TOOLSETS, parseSelection, selectTools, TOOLSET_NAMES, toolsetOf, type ToolSelection } from "../../tools/toolsets.ts";
import { inputFields, jsonBytes, LISTING_CREDENTIALS, MODEL_VIEW_BUDGET, modelView } from "../support/mcp-listing.ts";

/**
 * What tools/list costs an agent, and whether popular clients can read it. The budget: what a
 * model reads of an admin key's whole listing (names, descriptions, input schemas) at most
 * 40 KB, about 10k tokens at 4 bytes a token. bench/results/tool-list.md records the numbers
 * (`npm run bench -- tool-list`).
 */
const listing = (credential: Credential, selection: ToolSelection = ALL_TOOLS) => ({ tools: describeTools(selectTools(toolsFor(registry, credential), selection)) });

const admin = LISTING_CREDENTIALS.admin!;

describe("tools/list size", () => {
  test("an admin key's whole listing, as a model reads it, fits in 40 KB", () => {
    const { tools } = listing(admin);
    expect(tools.length).toBe(registry.length);
    const size = jsonBytes(modelView(tools));
    console.log(`admin, every tool: ${size} bytes a model reads (~${Math.round(size / 4)} tokens); ${jsonBytes({ tools })} bytes with titles, annotations and output schemas`);
    expect(size).toBeLessThanOrEqual(MODEL_VIEW_BUDGET);
  });

  test("every credential and toolset, for the record (bench/results/tool-list.md)", () => {
    const rows: string[] = [];
    for (const [name, credential] of Object.entries(LISTING_CREDENTIALS)) {
      const l = listing(credential);
      rows.push(`${name}: ${l.tools.length} tools, ${jsonBytes(modelView(l.tools))} bytes a model reads, ${jsonBytes(l)} in all`);
    }
    for (const set of TOOLSET_NAMES) {
      const l = listing(admin, { toolsets: [set], readOnly: false });
      rows.push(`toolset ${set}: ${l.tools.length} tools, ${jsonBytes(modelView(l.tools))} bytes a model reads, ${jsonBytes(l)} in all`);
    }
    console.log(rows.join("\n"));
    // Output schemas are not in the budget, but they must not grow back to what they were
    // before each large resource was described once per listing (154 KB).
    expect(jsonBytes(listing(admin))).toBeLessThanOrEqual(110 * 1024);
  });

  test("every tool belongs to one toolset", () => {
    expect(registry.filter((t) => toolsetOf(t) === null).map((t) => t.name)).toEqual([]);
  });
});

describe("tools/list descriptions", () => {
  const tools = listing(admin).tools;

  test("every input field of every tool has a description, nested fields too", () => {
    const missing = tools.flatMap((t) => inputFields(t.inputSchema).filter((f) => !f.description?.trim()).map((f) => `${t.name}.${f.path}`));
    expect(missing).toEqual([]);
    expect(tools.flatMap((t) => inputFields(t.inputSchema)).length).toBeGreaterThan(200);
  });

  test("limits that only guard the server, and floors a field's meaning has, are left to validation; the rest stay; ids say so in words", () => {
    type S = Record<string, any>;
    const input = (name: string) => tools.find((t) => t.name === name)!.inputSchema as S;
    const full = (name: string) => inputJsonSchema(registry.find((t) => t.name === name)!) as S;
    const upload = input("presign_upload").properties;
    // Strings of 128 characters or more, "not empty", a content type's header pattern: the full schema keeps them.
    expect(upload.key).toEqual({ type: "string", description: expect.any(String) });
    expect(full("presign_upload").properties.key).toMatchObject({ minLength: 1, maxLength: expect.any(Number) });
    expect(upload.contentType).toEqual({ type: "string", description: expect.any(String) });
    expect(full("presign_upload").properties.contentType).toMatchObject({ minLength: 3, maxLength: 255, pattern: expect.any(String) });
    expect(upload.tags.items).toEqual({ type: "string", pattern: expect.any(String) });
    // A floor without a ceiling goes; one with a ceiling stays, as do short caps an agent may meet.
    expect(input("media_list").properties.minWidth).not.toHaveProperty("minimum");
    expect(input("presign_upload_part").properties.partNumber).toMatchObject({ minimum: 1, maximum: 10000 });
    expect(input("api_keys_create").properties.name).toMatchObject({ maxLength: 100 });
    // An id field says so in words; the instructions say once that ids are UUIDs.
    expect(input("buckets_get").properties.id).toEqual({ type: "string", description: "Bucket id" });
    expect(full("buckets_get").properties.id).toMatchObject({ format: "uuid" });
    expect(INSTRUCTIONS).toContain("Ids are UUIDs.");
    // An array's items and a nullable's branches do not repeat the field's description.
    expect(input("objects_set_categories").properties.categoryIds.items).toEqual({ type: "string", format: "uuid" });
    expect(input("categories_move").properties.parentId.anyOf).toEqual([{ type: "string", format: "uuid" }, { type: "null" }]);
  });

  test("no input schema carries $schema or additionalProperties: false (unknown arguments are still refused by name)", () => {
    for (const t of tools) {
      expect(JSON.stringify(t.inputSchema)).not.toContain('"$schema"');
      expect(JSON.stringify(t.inputSchema)).not.toContain('"additionalProperties":false');
    }
  });
});

describe("selection: the bare URL lists everything; toolsets and readonly only narrow", () => {
  const names = (selection: ReturnType<typeof parseSelection>) => {
    if ("error" in selection) throw new Error(selection.error);
    return selectTools(registry, selection).map((t) => t.name);
  };
  const all = registry.map((t) => t.name);
  const readOnly = registry.filter((t) => t.annotations.readOnlyHint).map((t) => t.name);

  test("no parameter: every tool", () => {
    expect(names(parseSelection([], []))).toEqual(all);
  });

  test("toolsets narrow, default and all are names, repeats add up", () => {
    expect(names(parseSelection(["all"], []))).toEqual(all);
    expect(names(parseSelection(["default"], []))).toEqual(selectTools(registry, DEFAULT_SELECTION).map((t) => t.name));
    expect(new Set(selectTools(registry, DEFAULT_SELECTION).map((t) => toolsetOf(t)))).toEqual(new Set(DEFAULT_TOOLSETS));
    expect(names(parseSelection(["webhooks"], [])).every((n) => n.startsWith("webhooks_"))).toBe(true);
    expect(names(parseSelection(["media", "search"], []))).toEqual(names(parseSelection(["media,search"], [])));
    expect(names(parseSelection([" Media , SEARCH "], []))).toEqual(names(parseSelection(["media,search"], [])));
    expect(names(parseSelection(["default", "webhooks"], []))).toContain("webhooks_create");
  });

  test("readonly: only an explicit false (false, 0, no, off in any case) leaves the write tools; anything else narrows", () => {
    for (const v of ["true", "TRUE", "True", "1", "yes", "YES", "on", "On", "", " ", "maybe", "ture", "2", "y"]) expect({ v, names: names(parseSelection([], [v])) }).toEqual({ v, names: readOnly });
    for (const v of ["false", "FALSE", "0", "no", "off", "Off", " false "]) expect({ v, names: names(parseSelection([], [v])) }).toEqual({ v, names: all });
    // Asked twice, the narrower answer wins: read-only is never dropped by a second value.
    expect(names(parseSelection([], ["false", "true"]))).toEqual(readOnly);
    expect(names(parseSelection([], ["false", "nope"]))).toEqual(readOnly);
    expect(names(parseSelection(["webhooks"], ["on"]))).toEqual(["webhooks_list", "webhooks_get", "webhooks_deliveries_list"]);
  });

  test("a toolsets choice that names nothing or an unknown set is refused, naming the parameter", () => {
    for (const v of [[""], [","], [" , "], ["", ""]]) expect(parseSelection(v, [])).toEqual({ parameter: "toolsets", error: expect.stringContaining("toolsets") });
    expect(parseSelection(["media,nonsense"], [])).toEqual({ parameter: "toolsets", error: expect.stringContaining("Unknown toolset nonsense") });
    expect(parseSelection(["media", "nonsense"], [])).toEqual({ parameter: "toolsets", error: expect.stringContaining("Unknown toolset nonsense") });
  });
});

describe("annotations", () => {
  test("a delete is not marked idempotent: repeated, it answers not_found (test/e2e/mcp-tool-list.test.ts calls it twice)", () => {
    const deletes = registry.filter((t) => t.http.method === "DELETE");
    expect(deletes.map((t) => t.name)).toContain("media_delete");
    for (const t of deletes) expect({ tool: t.name, idempotentHint: t.annotations.idempotentHint }).toEqual({ tool: t.name, idempotentHint: false });
    expect(registry.find((t) => t.name === "media_delete")!.annotations).toMatchObject({ destructiveHint: true, idempotentHint: false });
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
  const tools = listing(admin).tools;

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
