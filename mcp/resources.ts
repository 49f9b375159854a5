import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CompleteRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import { AppError } from "../domain/core/errors.ts";
import type { MediaObject } from "../contract/media.ts";
import type { Page } from "../contract/common.ts";
import type { ToolContext } from "../tools/define.ts";
import { invokeTool } from "../tools/invoke.ts";
import { findTool } from "../tools/registry.ts";

/**
 * Media objects as MCP resources, so an agent (or the person using it) can attach and look at
 * what is stored: its JSON, and its thumbnail as an image. Everything goes through the same
 * tools as tools/call (media_list, media_get, media_thumbnail...), so scopes, bucket
 * restriction and tenancy are decided in one place; a read the credential may not make is an
 * MCP error carrying the tool's message.
 */

export const TEMPLATES = [
  { uriTemplate: "media://objects/{id}", name: "media-object", title: "Media object by id", description: "A media object's JSON, and its thumbnail as an image when it has one", mimeType: "application/json" },
  { uriTemplate: "media://buckets/{bucket}/{+key}", name: "media-object-by-key", title: "Media object by bucket name and key", description: "The object at this key in this bucket (same contents as media://objects/{id})", mimeType: "application/json" },
  { uriTemplate: "media://tags/{slug}", name: "tagged-objects", title: "Objects with a tag", description: "The first 50 objects carrying this tag", mimeType: "application/json" },
] as const;

/** resources/list pages: an opaque cursor (the offset, base64url) as the spec asks. */
const PAGE = 50;
const cursorOf = (offset: number) => Buffer.from(`o:${offset}`).toString("base64url");
function offsetOf(cursor: string | undefined): number {
  if (!cursor) return 0;
  const m = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString());
  if (!m) throw new ResourceError(ErrorCode.InvalidParams, "Invalid cursor");
  return Number(m[1]);
}

/**
 * A JSON-RPC error for resources: the SDK's McpError writes "MCP error <code>: " into its
 * message, and the client adds the same prefix again, so the agent read it twice. This carries
 * the code and data with the message as is.
 */
class ResourceError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

async function call<T>(name: string, input: Record<string, unknown>, ctx: ToolContext): Promise<T> {
  try {
    return (await invokeTool(findTool(name)!, input, ctx)) as T;
  } catch (err) {
    if (err instanceof AppError) {
      // -32002 is the spec's "resource not found": what a credential cannot reach (outside its
      // bucket, or its organization) does not exist for it, as docs/mcp.md says; the tool's code
      // and message still tell which.
      const code = err.code === "not_found" || err.code === "forbidden" ? -32002 : err.code === "validation_error" ? ErrorCode.InvalidParams : ErrorCode.InternalError;
      throw new ResourceError(code, err.message, { code: err.code });
    }
    throw err;
  }
}

const asResource = (o: MediaObject): Resource => ({
  uri: `media://objects/${o.id}`,
  name: o.key,
  title: o.fileName,
  // What resources/read answers first: the object's JSON (its thumbnail follows as WebP).
  mimeType: "application/json",
  description: `${o.kind} (${o.contentType}, ${o.size} bytes) in bucket ${o.bucketId}`,
});

async function readObject(uri: string, object: MediaObject, ctx: ToolContext): Promise<ReadResourceResult> {
  const contents: ReadResourceResult["contents"] = [{ uri, mimeType: "application/json", text: JSON.stringify(object) }];
  if (object.thumbnail?.state === "ready") {
    const tool = findTool("media_thumbnail")!;
    const thumb = await call<never>("media_thumbnail", { id: object.id }, ctx);
    for (const block of (await tool.mcpContent?.(thumb, ctx)) ?? []) {
      if (block.type === "image") contents.push({ uri: `media://objects/${object.id}/thumbnail`, mimeType: block.mimeType, blob: block.data });
    }
  }
  return { contents };
}

async function readThumbnail(uri: string, id: string, ctx: ToolContext): Promise<ReadResourceResult> {
  const thumb = await call<never>("media_thumbnail", { id }, ctx);
  const contents: ReadResourceResult["contents"] = [];
  for (const block of (await findTool("media_thumbnail")!.mcpContent?.(thumb, ctx)) ?? []) {
    if (block.type === "image") contents.push({ uri, mimeType: block.mimeType, blob: block.data });
  }
  if (contents.length === 0) throw new ResourceError(-32002, `Object ${id} has no thumbnail yet`, { uri });
  return { contents };
}

async function bucketByName(name: string, ctx: ToolContext): Promise<{ id: string; name: string } | null> {
  for (let offset = 0; ; offset += 200) {
    const page = await call<Page<{ id: string; name: string }>>("buckets_list", { limit: 200, offset }, ctx);
    const found = page.data.find((b) => b.name === name);
    if (found || !page.hasMore) return found ?? null;
  }
}

export function serveResources(server: Server, contextOf: () => ToolContext): void {
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [...TEMPLATES] }));

  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const ctx = contextOf();
    const offset = offsetOf(request.params?.cursor);
    const page = await call<Page<MediaObject>>("media_list", { limit: PAGE, offset }, ctx);
    return { resources: page.data.map(asResource), ...(page.hasMore ? { nextCursor: cursorOf(offset + PAGE) } : {}) };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const ctx = contextOf();
    const uri = request.params.uri;
    let m = /^media:\/\/objects\/([0-9a-f-]{36})$/i.exec(uri);
    if (m) return readObject(uri, await call<MediaObject>("media_get", { id: m[1] }, ctx), ctx);
    // The thumbnail URI a read hands out is readable on its own.
    m = /^media:\/\/objects\/([0-9a-f-]{36})\/thumbnail$/i.exec(uri);
    if (m) return readThumbnail(uri, m[1]!, ctx);
    m = /^media:\/\/buckets\/([^/]+)\/(.+)$/.exec(uri);
    if (m) {
      const [bucketName, key] = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!)];
      const bucket = await bucketByName(bucketName, ctx);
      const page = bucket ? await call<Page<MediaObject>>("media_list", { bucketId: bucket.id, search: key.slice(0, 200), limit: 200 }, ctx) : null;
      const object = page?.data.find((o) => o.key === key);
      if (!object) throw new ResourceError(-32002, `No object ${key} in bucket ${bucketName}`, { uri });
      return readObject(uri, object, ctx);
    }
    m = /^media:\/\/tags\/([^/]+)$/.exec(uri);
    if (m) {
      const page = await call<Page<MediaObject>>("media_list", { tags: decodeURIComponent(m[1]!), limit: PAGE }, ctx);
      return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(page) }] };
    }
    throw new ResourceError(-32002, `Unknown resource ${uri}: see resources/templates/list`, { uri });
  });

  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const ctx = contextOf();
    const { ref, argument } = request.params;
    const prefix = argument.value;
    const done = (values: string[]) => {
      const matching = values.filter((v) => v.startsWith(prefix));
      return { completion: { values: matching.slice(0, 100), total: matching.length, hasMore: matching.length > 100 } };
    };
    if (ref.type !== "ref/resource") return done([]);
    if (argument.name === "bucket") {
      return done((await call<Page<{ name: string }>>("buckets_list", { limit: 200 }, ctx)).data.map((b) => b.name));
    }
    if (argument.name === "key") {
      const bucketName = request.params.context?.arguments?.bucket;
      const bucket = bucketName ? await bucketByName(bucketName, ctx) : null;
      const input = { ...(bucket ? { bucketId: bucket.id } : {}), ...(prefix ? { search: prefix.slice(0, 200) } : {}), sort: "key", order: "asc", limit: 200 };
      return done((await call<Page<MediaObject>>("media_list", input, ctx)).data.map((o) => o.key));
    }
    if (argument.name === "slug") return done((await call<Page<{ slug: string }>>("tags_list", { limit: 200 }, ctx)).data.map((t) => t.slug));
    if (argument.name === "id") return done((await call<Page<MediaObject>>("media_list", { limit: 200 }, ctx)).data.map((o) => o.id));
    return done([]);
  });
}
