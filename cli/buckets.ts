import type { AnyTool } from "../tools/define.ts";
import { pathParams } from "../tools/define.ts";
import { findTool } from "../tools/registry.ts";
import { ApiError, type RestClient } from "./client.ts";

/**
 * Wherever a command takes a bucket (`--bucket-id`, `--bucket`, the `<id>` of `buckets get`),
 * a name works as well as an id: names are what people remember, ids what the API takes.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A bucket given by name is looked up (one page of the list at a time); an id is used as is. */
export async function resolveBucketId(client: RestClient, value: string): Promise<string> {
  if (UUID.test(value)) return value;
  const list = findTool("buckets_list")!;
  for (let offset = 0; ; ) {
    const page = await client.call<{ data: { id: string; name: string }[]; hasMore: boolean }>(list, { limit: 200, offset });
    const hit = page.data.find((b) => b.name === value);
    if (hit) return hit.id;
    if (!page.hasMore || page.data.length === 0) break;
    offset += page.data.length;
  }
  throw new ApiError(404, "not_found", `no bucket named '${value}' (give its name or id; see media buckets list)`);
}

/** The input fields of a tool that name a bucket: `bucketId`, and the path's `{id}` under /buckets. */
export function bucketFields(tool: Pick<AnyTool, "http">, inputFields: readonly string[]): string[] {
  const fields: string[] = inputFields.filter((f) => f === "bucketId");
  if (/^\/buckets\/\{id\}/.test(tool.http.path) && pathParams(tool.http.path)[0] === "id") fields.push("id");
  return fields;
}
