import type { Deps } from "../domain/core/deps.ts";
import { errors } from "../domain/core/errors.ts";
import { readThumbnail } from "../domain/derivatives/derivatives.ts";
import { verifyThumbnailPath } from "../domain/derivatives/thumbnail-urls.ts";
import type { HttpContext } from "./pipeline.ts";

/**
 * GET /api/thumbnails/{id}?v=<etag>&expires=<unix seconds>&signature=<HMAC>: a thumbnail
 * without a credential, from the signed path a listing gave (thumbnail.path). Not a tool, as
 * it takes no credential; so the pictures of a page of tiles never count against the
 * caller's rate limit. The URL names one version of the thumbnail: cached until it expires.
 */
export function signedThumbnail(deps: Deps) {
  return async (ctx: HttpContext): Promise<Response> => {
    const objectId = decodeURIComponent(ctx.url.pathname.slice(ctx.url.pathname.lastIndexOf("/") + 1));
    const { v, expires, signature } = Object.fromEntries(ctx.url.searchParams);
    if (!v || !expires || !signature || String(Number(expires)) !== expires) throw errors.forbidden("This thumbnail URL is not valid");
    const t = await verifyThumbnailPath(deps, objectId, v, Number(expires), signature);
    const left = Math.max(0, Number(expires) - Math.floor(deps.clock.now().getTime() / 1000));
    const headers = new Headers({
      etag: `"${t.etag}"`,
      "cache-control": `private, max-age=${left}, immutable`,
      "x-content-type-options": "nosniff",
      "content-type": t.contentType,
      "content-length": String(t.size),
    });
    return new Response(await readThumbnail(deps, t), { status: 200, headers });
  };
}
