import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Credential } from "../../tools/access.ts";

/**
 * What a model reads of a tools/list: each tool's name, description and input schema, as hosts
 * pass them on. Titles and annotations are for the client's screens and output schemas for its
 * checks of results; the budget below is on this part.
 */
export const modelView = (tools: readonly Tool[]) => tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));

export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/** The budget for an admin key's whole listing as a model reads it: about 10k tokens. */
export const MODEL_VIEW_BUDGET = 40 * 1024;

/** The credentials the listing is measured and checked for (bench/tool-list.ts, the tests). */
export const LISTING_CREDENTIALS: Record<string, Credential> = {
  read: { scopes: new Set(["read"]), bucketId: null },
  write: { scopes: new Set(["write"]), bucketId: null },
  delete: { scopes: new Set(["delete"]), bucketId: null },
  "read, write": { scopes: new Set(["read", "write"]), bucketId: null },
  "read, write, delete": { scopes: new Set(["read", "write", "delete"]), bucketId: null },
  admin: { scopes: new Set(["admin"]), bucketId: null },
  "read, write, delete; one bucket": { scopes: new Set(["read", "write", "delete"]), bucketId: "00000000-0000-4000-8000-000000000000" },
};

type Schema = { properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; description?: string };

/** Every input field, nested ones too (array items, anyOf branches), with its description. */
export function inputFields(schema: Schema, path = ""): { path: string; description: string | undefined }[] {
  const out: { path: string; description: string | undefined }[] = [];
  const inner = (s: Schema, at: string) => {
    if (s.properties) out.push(...inputFields(s, at));
    if (s.items) inner(s.items, `${at}[]`);
    for (const branch of s.anyOf ?? []) inner(branch, at);
  };
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const at = path ? `${path}.${name}` : name;
    out.push({ path: at, description: field.description });
    inner(field, at);
  }
  return out;
}
