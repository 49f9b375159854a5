/**
 * Input generators for fuzzing registry tools: values derived from a tool's JSON Schema
 * (so they look valid and reach the handler), and mutations of them (so they probe every
 * way validation, routing and parsing can go wrong). Kept apart from the test so the
 * request building and the nasty catalogues can be reused by other hardening tests.
 */
import fc from "fast-check";
import { type AnyTool, inputLocation, pathParams } from "../../tools/define.ts";
import { inputJsonSchema, type JsonSchema } from "../../tools/json-schema.ts";

/** Real things of the fixture organization, so some generated inputs hit existing rows. */
export interface Pools {
  ids: string[];
  /** Ids by what they name ("bucket", "media", "tag", ...), so an id field mostly gets the right kind. */
  idsOf: Record<string, string[]>;
  keys: string[];
  names: string[];
  /** Open multipart uploads. */
  uploadIds: string[];
}

/** Dates a parser may accept that the database cannot hold. */
export const OUT_OF_RANGE_DATES: string[] = [
  "0000-01-01",
  "0000-12-31T23:59:59Z",
  "0001-01-01T00:00:00+01:00",
  "9999-12-31T23:59:59-01:00",
  "+275760-09-13T00:00:00Z",
  "-000001-01-01T00:00:00Z",
];

/** Request line lengths around the service's 16 KiB head limit and past Bun's default. */
export const LONG_QUERY_LENGTHS = [16 * 1024 - 200, 16 * 1024 + 1, 64 * 1024, 200 * 1024];

/**
 * Values for the numeric fields of a payment event (created, amounts, period bounds) that a
 * signed event may still carry: a provider bug or a replayed test event must be a 400 (the
 * provider stops retrying), never a 500 it retries forever. `"1e400"` is also spliced in as a
 * bare JSON number, which JSON.parse reads as Infinity.
 */
export const NASTY_WEBHOOK_NUMBERS: unknown[] = ["yesterday", "1e400", "", null, true, [], {}, -1, 1.5, 1e20, -1e20, 1e308, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER];

/** Event ids and types with what a database column cannot hold. */
export const NASTY_WEBHOOK_IDS: string[] = ["evt_\u0000x", "\u0000", "evt_\ud800", "evt_\r\n", "x".repeat(10_000)];

// Strings that have broken parsers, routers, SQL builders and key layouts somewhere.
export const NASTY_STRINGS: string[] = [
  "",
  " ",
  "x".repeat(10_000),
  "a".repeat(1025),
  // 1024 characters but 2048 bytes of UTF-8: passes a character count, fails a byte count.
  "ü".repeat(1024),
  "\u0000",
  "a\u0000b",
  "\u0001\u001f\u007f",
  "\u0085\u009f",
  "\r\n",
  "\t",
  "\u202eevil\u202c",
  "\u200b",
  "\ufeff",
  // Lone surrogates: valid in a JS string and in JSON ("\ud800"), with no UTF-8 form, so
  // PostgreSQL's text and jsonb refuse them (the 2026 attack run: a 500 on metadata).
  "\ud800",
  "a\udfffb",
  "\udc00\ud800",
  "x\ud83d",
  "💥🚀👩‍👩‍👧",
  "𝕏".repeat(600),
  "e\u0301",
  "..",
  ".",
  "../..",
  "../../etc/passwd",
  "a/../../b",
  "a/./b",
  "/",
  "//",
  "/leading",
  "a//b",
  "trailing/",
  "\\..\\..\\windows",
  "%2e%2e%2f%2e%2e",
  "%00",
  "%",
  "%zz",
  "_derivatives/x",
  "' OR 1=1 --",
  "'; drop table media_objects; --",
  '"',
  "$1",
  "\\",
  "%_%",
  "*",
  "${jndi:ldap://x}",
  "<script>alert(1)</script>",
  "null",
  "undefined",
  "NaN",
  "Infinity",
  "-1",
  "1e309",
  "0x10",
  "true",
  "[object Object]",
  "__proto__",
  "constructor",
  "2026-13-45T99:99:99Z",
  "0000-00-00",
  "99999-12-31",
  // Dates JavaScript parses and PostgreSQL refuses (year 0, past 9999 once an offset applies).
  ...OUT_OF_RANGE_DATES,
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "00000000-0000-0000-0000-00000000000g",
  "javascript:alert(1)",
  "http://",
  "file:///etc/passwd",
];

// JSON can carry no NaN or Infinity (they become null); the strings above cover those spellings.
export const NASTY_NUMBERS: number[] = [
  -1,
  0,
  -0,
  0.5,
  1.5,
  -1.5,
  1e-300,
  2 ** 31,
  2 ** 32,
  2 ** 53 + 2,
  2 ** 63,
  -(2 ** 63),
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
];

export const WRONG_TYPES: unknown[] = [null, true, false, {}, [], [[]], [null], { a: 1 }, { "": "" }, 0, "string", [1, "two", { three: 3 }]];

export const ODD_KEYS: string[] = ["", "__proto__", "constructor", "prototype", "ключ", "🔑", "\u0000", "../x", "a.b", "a[0]", "k".repeat(1000), "\u202e", "\ud800", "k\udfff"];

/** Nested arrays `depth` levels deep, as a value (for bodies) and as text (for raw requests). */
export function deepArray(depth: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}
export const deepJsonText = (depth: number) => `${"[".repeat(depth)}0${"]".repeat(depth)}`;
export const deepObjectText = (depth: number) => `${'{"a":'.repeat(depth)}0${"}".repeat(depth)}`;

const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_NUMBERS) },
  { weight: 2, arbitrary: fc.constantFrom(...WRONG_TYPES) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constant(null).map(() => deepArray(100)) },
  { weight: 1, arbitrary: fc.constant(null).map(() => new Array(1000).fill("x")) },
);

/** Values an object key might plausibly be, including existing ones and ones that must be refused. */
function keyLike(pools: Pools): fc.Arbitrary<string> {
  const segment = fc.oneof(fc.stringMatching(/^[a-z0-9._-]{1,12}$/), fc.constantFrom("..", ".", "", "é", "💥", "%2F", " "));
  return fc.oneof(
    { weight: 2, arbitrary: fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/")) },
    { weight: 1, arbitrary: fc.constantFrom(...(pools.keys.length ? pools.keys : ["a.png"])) },
    { weight: 1, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  );
}

// What an id field names: by its own name, or for a path's {id} by the resource the path starts with.
const ID_KINDS: Record<string, string> = {
  bucketId: "bucket",
  objectId: "media",
  baseObjectId: "media",
  tagIds: "tag",
  categoryIds: "category",
  parentId: "category",
  clipId: "clip",
  clipIds: "clip",
  itemId: "item",
};
const PATH_KINDS: Record<string, string> = { buckets: "bucket", media: "media", objects: "media", tags: "tag", categories: "category", sets: "set", storyboards: "storyboard", "api-keys": "key" };

function idKind(tool: AnyTool, field: string): string | undefined {
  if (field === "id") return PATH_KINDS[tool.http.path.split("/")[1] ?? ""];
  return ID_KINDS[field];
}

function uuidLike(pools: Pools, kind?: string): fc.Arbitrary<string> {
  const own = kind ? (pools.idsOf[kind] ?? []) : [];
  return fc.oneof(
    { weight: own.length ? 6 : 0, arbitrary: fc.constantFrom(...(own.length ? own : ["00000000-0000-0000-0000-000000000000"])) },
    { weight: 2, arbitrary: fc.constantFrom(...(pools.ids.length ? pools.ids : ["00000000-0000-0000-0000-000000000000"])) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.uuid().map((u) => u.toUpperCase()) },
  );
}

function boundedInt(min: number | undefined, max: number | undefined): fc.Arbitrary<number> {
  const lo = Math.max(min ?? -1_000_000, -(2 ** 31));
  const hi = Math.min(max ?? 1_000_000, 2 ** 31 - 1);
  const edges = [min, max, min !== undefined ? min - 1 : undefined, max !== undefined ? max + 1 : undefined].filter((n): n is number => n !== undefined);
  return fc.oneof({ weight: 4, arbitrary: fc.integer({ min: lo, max: Math.max(lo, hi) }) }, { weight: 1, arbitrary: fc.constantFrom(...edges, 0) });
}

function stringFor(s: JsonSchema, name: string, pools: Pools, kindOf?: (field: string) => string | undefined): fc.Arbitrary<unknown> {
  if (s.format === "uuid") return uuidLike(pools, kindOf?.(name));
  if (s.format === "uri") return fc.oneof(fc.webUrl(), fc.constantFrom("http://localhost/x", "not a url", "ftp://x"));
  if (name === "key") return keyLike(pools);
  if (name === "uploadId" && pools.uploadIds.length) return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pools.uploadIds) }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) });
  if (/^date/i.test(name)) {
    const date = fc.date({ noInvalidDate: true, min: new Date("1970-01-01"), max: new Date("2100-01-01") });
    return fc.oneof(date.map((d) => d.toISOString()), date.map((d) => d.toISOString().slice(0, 10)), fc.constantFrom(...OUT_OF_RANGE_DATES), fc.constantFrom(...NASTY_STRINGS.slice(60)));
  }
  const minLength = (s.minLength as number | undefined) ?? 0;
  const maxLength = Math.min((s.maxLength as number | undefined) ?? 40, 40);
  if (typeof s.pattern === "string") {
    let re: RegExp | undefined;
    try {
      re = new RegExp(s.pattern, "u");
    } catch {}
    if (re) {
      // fast-check cannot read \p{...} classes; those fields get words plus the nasty strings.
      const matching = /\\p\{/.test(s.pattern) ? fc.stringMatching(/^[a-z0-9 ._-]{1,20}$/) : fc.stringMatching(re).filter((v) => v.length <= ((s.maxLength as number) ?? 1e9));
      return fc.oneof({ weight: 3, arbitrary: matching }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) });
    }
  }
  const plain = fc.string({ minLength, maxLength: Math.max(minLength, maxLength), unit: "grapheme" });
  if (name === "name" || name === "tierKey") return fc.oneof(plain, fc.constantFrom(...pools.names));
  return plain;
}

/** A value that satisfies (or nearly satisfies, at the edges) a JSON Schema node. */
export function fromSchema(s: JsonSchema | undefined, pools: Pools, name = "", kindOf?: (field: string) => string | undefined): fc.Arbitrary<unknown> {
  if (!s || Object.keys(s).length === 0) return fc.jsonValue({ maxDepth: 2 });
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if ("const" in s) return fc.constant(s.const);
  const variants = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (variants) return fc.oneof(...variants.map((v) => fromSchema(v, pools, name, kindOf)));
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case "string":
      return stringFor(s, name, pools, kindOf);
    case "integer":
      return boundedInt(s.minimum as number | undefined, s.maximum as number | undefined);
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const minLength = (s.minItems as number | undefined) ?? 0;
      const maxLength = Math.max(minLength, Math.min((s.maxItems as number | undefined) ?? 5, 5));
      return fc.array(fromSchema(s.items, pools, name, kindOf), { minLength, maxLength });
    }
    case "object":
      return objectFromSchema(s, pools, kindOf);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function objectFromSchema(s: JsonSchema, pools: Pools, kindOf?: (field: string) => string | undefined): fc.Arbitrary<Record<string, unknown>> {
  const props = s.properties ?? {};
  if (Object.keys(props).length === 0 && s.additionalProperties && typeof s.additionalProperties === "object") {
    const names = (s.propertyNames as JsonSchema | undefined) ?? { type: "string" };
    return fc.dictionary(fromSchema(names, pools) as fc.Arbitrary<string>, fromSchema(s.additionalProperties as JsonSchema, pools), { maxKeys: 5 });
  }
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of Object.entries(props)) model[k] = fromSchema(v, pools, k, kindOf);
  return fc.record(model, { requiredKeys: (s.required ?? []).filter((k) => k in props) }) as fc.Arbitrary<Record<string, unknown>>;
}

type Mutation =
  | { kind: "set"; field: string; value: unknown }
  | { kind: "drop"; field: string }
  | { kind: "extra"; field: string; value: unknown }
  | { kind: "whole"; value: unknown };

function applyMutation(input: Record<string, unknown>, m: Mutation): unknown {
  switch (m.kind) {
    case "set":
      return { ...input, [m.field]: m.value };
    case "drop": {
      const out = { ...input };
      delete out[m.field];
      return out;
    }
    case "extra": {
      // defineProperty, so "__proto__" becomes an own key the way JSON.parse makes it.
      const out = { ...input };
      Object.defineProperty(out, m.field, { value: m.value, enumerable: true, configurable: true, writable: true });
      return out;
    }
    case "whole":
      return m.value;
  }
}

/**
 * Inputs for one tool: about a third schema-valid, the rest with one to three mutations
 * (a field set to a nasty value, a required field dropped, an odd extra field, or the
 * whole input replaced by something that is not an object).
 */
export function toolInput(tool: AnyTool, pools: Pools): fc.Arbitrary<unknown> {
  const schema = inputJsonSchema(tool);
  const fields = Object.keys(schema.properties ?? {});
  const valid = objectFromSchema(schema, pools, (field) => idKind(tool, field));
  const fieldName = fields.length ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fields) }, { weight: 1, arbitrary: fc.constantFrom(...ODD_KEYS) }) : fc.constantFrom(...ODD_KEYS);
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant("set" as const), field: fieldName, value: nastyValue }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("drop" as const), field: fieldName }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("extra" as const), field: fc.constantFrom(...ODD_KEYS), value: nastyValue }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("whole" as const), value: fc.constantFrom(...WRONG_TYPES) }) },
  );
  return fc.oneof(
    { weight: 1, arbitrary: valid },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([input, ms]) =>
        ms.reduce<unknown>((acc, m) => (acc && typeof acc === "object" && !Array.isArray(acc) ? applyMutation(acc as Record<string, unknown>, m) : acc), input),
      ),
    },
  );
}

const typeOf = (s: JsonSchema | undefined): string | undefined => {
  if (!s) return undefined;
  if (Array.isArray(s.enum)) return "enum";
  if (typeof s.type === "string") return s.format === "uuid" ? "uuid" : s.type;
  const variants = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  return variants?.map(typeOf).find((t) => t !== undefined && t !== "null");
};

/**
 * The fixed cases every tool gets besides the random ones: free-text fields get every nasty
 * string, numeric fields every nasty number, every field the wrong types; the very large
 * values (10,000-deep nesting, 100,000 items) go into the first field only.
 */
export function nastyInputs(tool: AnyTool, sample: Record<string, unknown>): unknown[] {
  const props = inputJsonSchema(tool).properties ?? {};
  const out: unknown[] = [{}, ...WRONG_TYPES.filter((v) => typeof v !== "object" || v === null || Array.isArray(v))];
  let first = true;
  for (const [field, schema] of Object.entries(props)) {
    const type = typeOf(schema);
    const values: unknown[] = [null, true, {}, [], "", -1, 1.5, "NaN"];
    if (type === "string" || type === "object" || type === "array") values.push(...NASTY_STRINGS);
    else if (type === "uuid" || type === "enum") values.push(...NASTY_STRINGS.filter((v) => v.length < 64).slice(0, 30));
    if (type === "integer" || type === "number") values.push(...NASTY_NUMBERS, "1", "1e3");
    if (type === "array") values.push([null], [""], ["../.."], new Array(1000).fill("x"));
    if (first) values.push(deepArray(10_000), new Array(100_000).fill(0), { [field]: deepArray(1000) });
    first = false;
    for (const value of values) out.push({ ...sample, [field]: value });
  }
  for (const key of ODD_KEYS) {
    const extra = { ...sample };
    Object.defineProperty(extra, key, { value: "x", enumerable: true, configurable: true, writable: true });
    out.push(extra);
  }
  return out;
}

export interface HttpCall {
  method: string;
  /** Path and query, e.g. /api/media/abc?limit=2 */
  path: string;
  body?: string;
}

// Lone surrogates cannot be percent-encoded; they travel as the bytes a WTF-8 encoder would send.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const encodeSegment = (v: string) => encodeURIComponent(v.replace(LONE_SURROGATE, "\uffff")).replaceAll("%EF%BF%BF", "%ED%A0%80");
const asQueryValue = (v: unknown) => (typeof v === "string" ? v : v !== null && typeof v === "object" ? JSON.stringify(v) : String(v));

/**
 * A tool input as a REST request: path parameters substituted (missing ones left empty),
 * the rest in the query string (GET, DELETE) or a JSON body.
 */
export function toHttpCall(tool: AnyTool, input: unknown): HttpCall {
  const obj = input && typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  const params = new Set(pathParams(tool.http.path));
  const path = `/api${tool.http.path.replace(/\{(\w+)\}/g, (_, name: string) => (obj[name] === undefined ? "" : encodeSegment(asQueryValue(obj[name]))))}`;
  const rest: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) if (!params.has(k)) Object.defineProperty(rest, k, { value: obj[k], enumerable: true, configurable: true, writable: true });
  if (inputLocation(tool) === "query") {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(rest)) {
      if (Array.isArray(v)) for (const item of v.slice(0, 1000)) q.append(k, asQueryValue(item));
      else q.append(k, asQueryValue(v));
    }
    const qs = q.toString();
    return { method: tool.http.method, path: qs ? `${path}?${qs}` : path };
  }
  const body = input === obj ? rest : input;
  return { method: tool.http.method, path, body: JSON.stringify(body) };
}
