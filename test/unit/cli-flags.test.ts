import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commandPath } from "../../cli/commands.ts";
import { resolveSettings } from "../../cli/config.ts";
import { type FlagSpec, flagsFromSchema, parseArgs, parseSize, UsageError } from "../../cli/flags.ts";
import { inputJsonSchema } from "../../tools/json-schema.ts";
import { findTool, registry } from "../../tools/registry.ts";

const specsOf = (name: string, except: string[] = []) => flagsFromSchema(inputJsonSchema(findTool(name)!), except);
const spec = (specs: FlagSpec[], name: string) => specs.find((s) => s.name === name)!;

describe("flags from a tool's input schema", () => {
  test("types, enums, lists, defaults and required fields come from the schema", () => {
    const keys = specsOf("api_keys_create");
    expect(spec(keys, "name")).toMatchObject({ type: "string", required: true });
    expect(spec(keys, "scopes")).toMatchObject({ type: "string", list: true, enum: ["read", "write", "delete", "admin"], default: ["read"] });
    expect(spec(keys, "scopes").required).toBeUndefined();
    expect(spec(keys, "expiresInDays")).toMatchObject({ type: "integer", default: 90 });
    expect(spec(keys, "bucketId")).toMatchObject({ type: "string", placeholder: "uuid" });
    const media = specsOf("media_list");
    expect(spec(media, "kind").enum).toContain("video");
    // objects and lists of objects travel as JSON
    expect(spec(specsOf("media_update_metadata", ["id"]), "metadata").type).toBe("json");
    expect(spec(specsOf("presign_complete_upload"), "parts")).toMatchObject({ type: "json" });
    expect(specsOf("media_get", ["id"])).toEqual([]);
  });

  test("every registry tool yields flags without throwing", () => {
    for (const tool of registry) expect(() => flagsFromSchema(inputJsonSchema(tool))).not.toThrow();
  });
});

describe("parseArgs", () => {
  const specs = [...specsOf("api_keys_create"), ...specsOf("media_list"), { name: "json", type: "boolean" } as FlagSpec, { name: "output", type: "string", short: "o" } as FlagSpec];

  test("--flag value, --flag=value, kebab and camel names, short flags, positionals anywhere", () => {
    const r = parseArgs(["pos1", "--name", "ci key", "--expires-in-days=30", "--bucketId", "b", "pos2", "-o", "out.bin", "--json"], specs);
    expect(r.positionals).toEqual(["pos1", "pos2"]);
    expect(r.values).toEqual({ name: "ci key", expiresInDays: 30, bucketId: "b", output: "out.bin", json: true });
  });

  test("lists: comma-separated, repeated, or both", () => {
    expect(parseArgs(["--scopes", "read,write", "--scopes", "delete"], specs).values.scopes).toEqual(["read", "write", "delete"]);
    expect(parseArgs(["--scopes=admin"], specs).values.scopes).toEqual(["admin"]);
  });

  test("booleans: bare, =false, --no-", () => {
    expect(parseArgs(["--json"], specs).values.json).toBe(true);
    expect(parseArgs(["--json=false"], specs).values.json).toBe(false);
    expect(parseArgs(["--no-json"], specs).values.json).toBe(false);
  });

  test("-- ends the flags; a lone - is a positional", () => {
    expect(parseArgs(["--name", "x", "--", "--not-a-flag", "-"], specs).positionals).toEqual(["--not-a-flag", "-"]);
    expect(parseArgs(["-"], specs).positionals).toEqual(["-"]);
  });

  test("JSON values inline or from @file", async () => {
    const meta = specsOf("media_update_metadata", ["id"]);
    expect(parseArgs(["--metadata", '{"a":1,"b":"x"}'], meta).values.metadata).toEqual({ a: 1, b: "x" });
    const file = join(tmpdir(), `cli-flags-${process.pid}.json`);
    await Bun.write(file, '{"from":"file"}');
    try {
      expect(parseArgs(["--metadata", `@${file}`], meta).values.metadata).toEqual({ from: "file" });
    } finally {
      rmSync(file, { force: true });
    }
  });

  test("mistakes are usage errors with a helpful message", () => {
    const fail = (argv: string[]) => {
      try {
        parseArgs(argv, specs, "api-keys create");
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError);
        return (err as UsageError).message;
      }
      throw new Error("expected a UsageError");
    };
    expect(fail(["--nmae", "x"])).toBe("unknown flag --nmae (did you mean --name?)");
    expect(fail(["--expires-in-days", "ten"])).toContain("expects a number");
    expect(fail(["--expires-in-days", "1.5"])).toContain("whole number");
    expect(fail(["--scopes", "read,root"])).toContain("must be one of read, write, delete, admin");
    expect(fail(["--kind", "vidoe"])).toContain("did you mean video?");
    expect(fail(["--name"])).toBe("--name needs a value");
    expect(fail(["--no-json=1"])).toContain("takes no value");
    const meta = specsOf("media_update_metadata", ["id"]);
    expect(() => parseArgs(["--metadata", "{"], meta)).toThrow("--metadata expects JSON");
  });
});

test("sizes: binary and decimal units", () => {
  expect(parseSize("16MiB")).toBe(16 * 1024 * 1024);
  expect(parseSize("16M")).toBe(16 * 1024 * 1024);
  expect(parseSize("5 mb")).toBe(5_000_000);
  expect(parseSize("1.5GiB")).toBe(1.5 * 1024 ** 3);
  expect(parseSize("1048576")).toBe(1048576);
  expect(parseSize("12 parsecs")).toBeNull();
});

test("commands are grouped by the path's area and named by the rest of the tool name", () => {
  const path = (name: string, p: string) => commandPath({ name, http: { method: "GET", path: p } });
  expect(path("api_keys_create", "/api-keys")).toEqual(["api-keys", "create"]);
  expect(path("media_update_metadata", "/media/{id}/metadata")).toEqual(["media", "update-metadata"]);
  expect(path("presign_create_multipart", "/presign/create-multipart")).toEqual(["presign", "create-multipart"]);
  expect(path("search", "/search")).toEqual(["search"]);
  // a tool whose name does not start with its path's area: the first word of its name
  expect(path("objects_set_tags", "/objects/{id}/tags")).toEqual(["objects", "set-tags"]);
  expect(path("tags_set_for_object", "/objects/{id}/tags")).toEqual(["tags", "set-for-object"]);
  const all = registry.map((t) => commandPath(t).join(" "));
  expect(new Set(all).size).toBe(registry.length);
});

describe("settings precedence", () => {
  const file = {
    defaultProfile: "main",
    profiles: { main: { url: "https://main.example", apiKey: "k-main" }, other: { url: "https://other.example/api/", apiKey: "k-other" } },
  };
  test("flags, then --profile, then MEDIA_URL/MEDIA_API_KEY, then MEDIA_PROFILE or the default profile", () => {
    expect(resolveSettings({}, {}, file)).toMatchObject({ profile: "main", url: "https://main.example", apiKey: "k-main" });
    expect(resolveSettings({}, { MEDIA_PROFILE: "other" }, file)).toMatchObject({ url: "https://other.example", apiKey: "k-other" });
    const env = { MEDIA_URL: "https://env.example", MEDIA_API_KEY: "k-env", MEDIA_PROFILE: "other" };
    expect(resolveSettings({}, env, file)).toMatchObject({ url: "https://env.example", apiKey: "k-env", source: { apiKey: "environment" } });
    expect(resolveSettings({ profile: "other" }, env, file)).toMatchObject({ url: "https://other.example", apiKey: "k-other" });
    expect(resolveSettings({ profile: "other", apiKey: "k-flag" }, env, file)).toMatchObject({ url: "https://other.example", apiKey: "k-flag", source: { apiKey: "flag" } });
    expect(resolveSettings({}, {}, { profiles: {} })).toMatchObject({ url: null, apiKey: null });
    expect(() => resolveSettings({ profile: "nope" }, {}, file)).toThrow(/no profile named 'nope'/);
  });
});
