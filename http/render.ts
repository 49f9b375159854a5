import { ZodError } from "zod";
import { renderParams } from "../contract/render.ts";
import type { Deps } from "../domain/core/deps.ts";
import { errors } from "../domain/core/errors.ts";
import { renderObject } from "../domain/derivatives/render.ts";
import { signedQuery, verifyRenderUrl } from "../domain/derivatives/render-urls.ts";
import { zodDetails } from "../tools/invoke.ts";
import { renderResponse } from "../tools/render.ts";
import type { HttpContext } from "./pipeline.ts";

/** Built once: Zod compiles a schema on its first use, and every request would pay that again. */
const strictParams = renderParams.strict();

/** Signed URLs are cached this long at most, however far off their expiry is. */
const YEAR = 31_536_000;

/**
 * GET /api/render/{id}?<render parameters>&expires=<unix seconds>&signature=<HMAC>: a render
 * without a credential, for <img> tags (URLs come from the media_render_url tool). Not a
 * tool, as it takes no credential: the signature, made with the organization's key over the
 * object and every parameter, is the permission, until `expires`. Public caches may keep the
 * answer until then.
 */
export function signedRender(deps: Deps) {
  return async (ctx: HttpContext): Promise<Response> => {
    const objectId = decodeURIComponent(ctx.url.pathname.slice(ctx.url.pathname.lastIndexOf("/") + 1));
    const q = ctx.url.searchParams;
    const { expires, signature, ...rest } = Object.fromEntries(q);
    if (!expires || !signature) throw errors.forbidden("This render URL is not valid");
    let params: ReturnType<typeof renderParams.parse>;
    try {
      params = strictParams.parse(rest);
    } catch (err) {
      if (err instanceof ZodError) throw errors.validation(zodDetails(err));
      throw err;
    }
    if (!/^[0-9a-f-]{36}$/i.test(objectId)) throw errors.forbidden("This render URL is not valid");
    // One signature, one URL: the query must be spelled exactly as it was signed ("width=1e2",
    // "0100" or a reordered query would be other URLs, and other cache keys, for one signature).
    const canonical = signedQuery(params);
    canonical.set("expires", expires);
    canonical.set("signature", signature);
    if (ctx.url.search.slice(1) !== canonical.toString() || String(Number(expires)) !== expires) throw errors.forbidden("This render URL is not valid");
    const object = await verifyRenderUrl(deps, objectId, params, Number(expires), signature);
    const r = await renderObject(deps, object, params, ctx.request.headers.get("accept"));
    const left = Math.max(0, Math.min(YEAR, Number(expires) - Math.floor(deps.clock.now().getTime() / 1000)));
    return renderResponse(deps, r, ctx.request, object.orgId, `public, max-age=${left}, immutable`, params.format === "auto");
  };
}
