import type { Config } from "../domain/core/config.ts";
import { SCOPES } from "../contract/common.ts";
import { AppError } from "../domain/core/errors.ts";
import type { HttpContext, Middleware } from "./pipeline.ts";

/**
 * How a client learns what a refused credential means (RFC 6750 and RFC 9728, as the MCP
 * authorization spec asks). Every 401 names the scheme and points at the protected-resource
 * metadata, which names this service as its own authorization server (http/oauth-routes.ts):
 * an MCP host that only speaks OAuth registers, sends the person to the console's consent page
 * and gets a token; any other client sends an API key it already has.
 */

/** The base every URL here is built on: PUBLIC_URL when set (behind a proxy), else where the request came. */
export const baseOf = (config: Pick<Config, "publicUrl">, url: URL) => (config.publicUrl ?? url.origin).replace(/\/+$/, "");

/** RFC 9728 (section 3.1): the metadata of resource `<base>/mcp` is at `<base>/.well-known/oauth-protected-resource/mcp`. */
export const PRM_PATH = "/.well-known/oauth-protected-resource";

export function protectedResourceMetadata(config: Pick<Config, "publicUrl">, url: URL, resourcePath: "" | "/mcp") {
  const base = baseOf(config, url);
  return {
    resource: `${base}${resourcePath}`,
    resource_name: "Media storage",
    authorization_servers: [base],
    bearer_methods_supported: ["header"],
    scopes_supported: [...SCOPES],
    resource_documentation: `${base}/api/docs`,
  };
}

/** The audience a request's bearer must be for (RFC 8707): `<base>/mcp` on /mcp, else the REST API's `<base>`. */
export function resourceOfRequest(config: Pick<Config, "publicUrl">, url: URL): string {
  return `${baseOf(config, url)}${url.pathname === "/mcp" ? "/mcp" : ""}`;
}

/** The WWW-Authenticate value of a 401 on `path`: error="invalid_token" when a bearer was sent and refused. */
export function bearerChallenge(config: Pick<Config, "publicUrl">, ctx: Pick<HttpContext, "url" | "request">, message: string): string {
  const resourcePath = ctx.url.pathname === "/mcp" ? "/mcp" : "";
  const parts = [`resource_metadata="${baseOf(config, ctx.url)}${PRM_PATH}${resourcePath}"`];
  if (ctx.request.headers.has("authorization")) {
    parts.unshift(`error="invalid_token"`);
    parts.push(`error_description="${message.replace(/["\\]/g, "'")}"`);
  }
  return `Bearer ${parts.join(", ")}`;
}

/**
 * Adds the challenge to the 401s of the steps after it (authentication's refusals, which are
 * thrown and become answers in the server's catch, with ctx.responseHeaders added).
 */
export function challengeOnUnauthorized(config: Pick<Config, "publicUrl">): Middleware {
  return async (ctx, next) => {
    try {
      return await next();
    } catch (err) {
      if (err instanceof AppError && err.status === 401) ctx.responseHeaders.set("www-authenticate", bearerChallenge(config, ctx, err.message));
      throw err;
    }
  };
}
