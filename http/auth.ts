import { authenticate } from "../domain/access/auth.ts";
import type { Deps } from "../domain/core/deps.ts";
import type { Middleware } from "./pipeline.ts";

/** First guard: no credential, no further work (401 before anything else runs). */
export function authentication(deps: Deps): Middleware {
  return async (ctx, next) => {
    ctx.caller = await authenticate(deps, ctx.request.headers.get("authorization"));
    return next();
  };
}
