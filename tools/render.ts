import { z } from "zod";
import { mediaSettings, renderedImage, renderParams, signedRenderUrl } from "../contract/render.ts";
import { type RenderResult, rememberRender, renderForCaller } from "../domain/derivatives/render.ts";
import { countRenderEgress } from "../domain/derivatives/render-egress.ts";
import { signRenderUrl } from "../domain/derivatives/render-urls.ts";
import { getMediaSettings, updateMediaSettings } from "../domain/derivatives/settings.ts";
import type { Deps } from "../domain/core/deps.ts";
import { etagMatches } from "./derivatives.ts";
import { defineTool, type McpContent, type ToolContext } from "./define.ts";
import { id } from "../contract/common.ts";

/** The render a handler made, for the REST or MCP answer that follows it in the same call. */
const made = new WeakMap<ToolContext, RenderResult>();

/** The bytes of a render: just made, or read back from the cache. */
export async function renderBody(deps: Deps, r: RenderResult): Promise<Uint8Array> {
  if (r.bytes) return r.bytes;
  const got = await deps.storage.get(r.key);
  if (!got) throw new Error(`cached render missing from storage: ${r.key}`);
  const bytes = Buffer.from(await new Response(got.body).arrayBuffer());
  rememberRender(deps, r.key, bytes);
  return bytes;
}

/**
 * A render as HTTP: ETag (the render's identity), 304 to a matching If-None-Match, and the
 * caching the caller's URL allows. Counted as egress when bytes are sent.
 */
export async function renderResponse(deps: Deps, r: RenderResult, request: Request, orgId: string, cacheControl: string, varyAccept: boolean): Promise<Response> {
  const headers = new Headers({ etag: `"${r.etag}"`, "cache-control": cacheControl, "x-content-type-options": "nosniff", "x-render-cache": r.cached ? "hit" : "miss" });
  if (varyAccept) headers.set("vary", "Accept");
  if (etagMatches(request.headers.get("if-none-match"), r.etag)) return new Response(null, { status: 304, headers });
  headers.set("content-type", r.contentType);
  headers.set("content-length", String(r.size));
  countRenderEgress(deps, r, orgId);
  // Bun sends a Uint8Array body as it is (the DOM typings do not list it).
  return new Response((await renderBody(deps, r)) as unknown as BodyInit, { status: 200, headers });
}

const renderInput = z.object({ id: id("Media object"), ...renderParams.shape });

export const renderTools = [
  defineTool({
    name: "media_render",
    title: "Render a media object at another size or format",
    description: "An image, video poster or PDF page resized on the fly, as an image. thumbnail_pending while processing.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/media/{id}/render", produces: "image/*" },
    input: renderInput,
    output: renderedImage,
    errors: ["not_found", "thumbnail_pending", "thumbnail_unavailable"],
    handler: async (input, ctx) => {
      const { id: objectId, ...params } = input;
      const r = await renderForCaller(ctx.deps, ctx.caller, objectId, params, ctx.request?.headers.get("accept"));
      made.set(ctx, r);
      return { objectId: r.objectId, bucketId: r.bucketId, contentType: r.contentType, width: r.width, height: r.height, size: r.size, etag: r.etag, cached: r.cached };
    },
    restResponse: (_out, request, ctx) => renderResponse(ctx.deps, made.get(ctx)!, request, ctx.caller.orgId, "private, no-cache", true),
    mcpContent: async (_out, ctx): Promise<McpContent[]> => {
      const r = made.get(ctx)!;
      countRenderEgress(ctx.deps, r, ctx.caller.orgId);
      return [{ type: "image", data: Buffer.from(await renderBody(ctx.deps, r)).toString("base64"), mimeType: r.contentType }];
    },
  }),
  defineTool({
    name: "media_render_url",
    title: "Get a signed render URL",
    description: "A URL of a render (as media_render) that needs no credential until it expires, for <img> tags.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/media/{id}/render-url" },
    input: renderInput.extend({ expiresIn: z.number().int().min(60).default(86_400).describe("Seconds the URL works (30 days at most by default)") }),
    output: signedRenderUrl,
    errors: ["not_found"],
    handler: async (input, ctx) => {
      const { id: objectId, expiresIn, ...params } = input;
      const signed = await signRenderUrl(ctx.deps, ctx.caller, objectId, params, expiresIn);
      // The address the request reached, over MCP as over REST: a bare path is no use in an <img>.
      const origin = ctx.deps.config.publicUrl ?? ctx.origin ?? "";
      return { url: `${origin.replace(/\/$/, "")}${signed.path}`, expiresAt: signed.expiresAt, expiresIn: signed.expiresIn };
    },
  }),
  defineTool({
    name: "media_settings_get",
    title: "Get the organization's media settings",
    description: "The organization's media settings.",
    scope: "read",
    reach: "organization",
    http: { method: "GET", path: "/media-settings" },
    input: z.object({}),
    output: mediaSettings,
    handler: (_input, { deps, caller }) => getMediaSettings(deps, caller.orgId),
  }),
  defineTool({
    name: "media_settings_update",
    title: "Change the organization's media settings",
    description: "Sets the settings given (object info keeps GPS either way).",
    scope: "admin",
    reach: "organization",
    http: { method: "PUT", path: "/media-settings" },
    input: z.object({
      stripLocation: z.boolean().optional().describe("true: renders of photos drop GPS positions; false: they keep them"),
      ocrOnUpload: z.boolean().optional().describe("Read text in uploaded images (OCR)"),
      ocrLanguages: z.array(z.string().regex(/^[a-z_]{2,16}$/)).min(1).max(8).optional().describe("Installed OCR languages"),
    }),
    output: mediaSettings,
    handler: (input, { deps, caller }) => updateMediaSettings(deps, caller.orgId, input),
  }),
];
