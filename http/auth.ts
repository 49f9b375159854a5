import { authenticate } from "../domain/access/auth.ts";
import { authenticateSigned } from "../domain/access/signed-requests.ts";
import type { Deps } from "../domain/core/deps.ts";
import { errors } from "../domain/core/errors.ts";
import type { ReplayStore } from "../domain/ports/replay.ts";
import { readBodyBytes } from "./body.ts";
import type { Middleware } from "./pipeline.ts";
import { resourceOfRequest } from "./protected-resource.ts";

/**
 * First guard: no credential, no further work (401 before anything else runs). A request
 * carries a bearer (API key secret, JWT or OAuth access token) or an HTTP Message Signature of a service
 * credential (docs/signed-requests.md), never both.
 */
export function authentication(deps: Deps, replay: ReplayStore): Middleware {
  return async (ctx, next) => {
    const headers = ctx.request.headers;
    if (!headers.has("signature-input") && !headers.has("signature")) {
      ctx.caller = await authenticate(deps, headers.get("authorization"), resourceOfRequest(deps.config, ctx.url));
      return next();
    }
    if (headers.has("authorization")) throw errors.unauthorized("Send either Authorization or a signature, not both");
    // The digest is over the exact bytes, so the body is read here (within the same limit as
    // every body) and handed on in a request of its own.
    const body = await readBodyBytes(ctx.request, deps.config.maxBodyBytes);
    const pathAndQuery = ctx.url.pathname + ctx.url.search;
    const publicUrl = deps.config.publicUrl?.replace(/\/+$/, "");
    const targetUris = [ctx.request.url, ...(publicUrl ? [publicUrl + pathAndQuery] : [])];
    ctx.caller = await authenticateSigned(deps, replay, { method: ctx.request.method, targetUris, headers, body });
    ctx.request = new Request(ctx.request.url, { method: ctx.request.method, headers, body: body.byteLength > 0 ? body : undefined });
    return next();
  };
}
