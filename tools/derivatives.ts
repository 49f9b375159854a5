import { z } from "zod";
import { id } from "../contract/common.ts";
import { type Thumbnail, thumbnail } from "../contract/media.ts";
import { getThumbnail, readThumbnail } from "../domain/derivatives/derivatives.ts";
import type { McpContent, ToolContext } from "./define.ts";
import { defineTool } from "./define.ts";

const YEAR = 31_536_000;

/** RFC 9110: If-None-Match is a list of entity tags (weak or strong) or "*". */
export function etagMatches(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((t) => t.trim().replace(/^W\//, "") === `"${etag}"`);
}

async function thumbnailResponse(out: Thumbnail, request: Request, ctx: ToolContext): Promise<Response> {
  const version = new URL(request.url).searchParams.get("v");
  const headers = new Headers({
    etag: `"${out.etag}"`,
    // A URL naming the version (?v=<etag>) never changes meaning: cache it for good. The bare
    // URL is revalidated each time; the ETag makes that a 304 without a body.
    "cache-control": version === out.etag ? `private, max-age=${YEAR}, immutable` : "private, no-cache",
    "x-content-type-options": "nosniff",
  });
  if (etagMatches(request.headers.get("if-none-match"), out.etag)) return new Response(null, { status: 304, headers });
  headers.set("content-type", out.contentType);
  headers.set("content-length", String(out.size));
  return new Response(await readThumbnail(ctx.deps, out), { status: 200, headers });
}

async function thumbnailImage(out: Thumbnail, ctx: ToolContext): Promise<McpContent[]> {
  const bytes = await new Response(await readThumbnail(ctx.deps, out)).arrayBuffer();
  return [{ type: "image", data: Buffer.from(bytes).toString("base64"), mimeType: out.contentType }];
}

export const derivativeTools = [
  defineTool({
    name: "media_thumbnail",
    title: "Get a media object's thumbnail",
    description: "The object's thumbnail as an image (WebP, at most 320 px). thumbnail_pending: retry soon.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/media/{id}/thumbnail", produces: "image/*" },
    input: z.object({
      id: id("Media object"),
      v: z.string().max(64).optional().describe("Thumbnail etag, for a cacheable URL"),
    }),
    output: thumbnail,
    errors: ["not_found", "thumbnail_pending", "thumbnail_unavailable"],
    handler: (input, { deps, caller }) => getThumbnail(deps, caller, input.id),
    restResponse: (out, request, ctx) => thumbnailResponse(out, request, ctx),
    mcpContent: (out, ctx) => thumbnailImage(out, ctx),
  }),
];
