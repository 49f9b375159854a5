import type { Config } from "../domain/core/config.ts";
import { SCOPES } from "../contract/common.ts";
import { AppError } from "../domain/core/errors.ts";
import type { HttpContext, Middleware } from "./pipeline.ts";

/**
 * How a client learns what a refused credential means (RFC 6750 and RFC 9728, as the MCP
 * authorization spec asks). Every 401 names the scheme and points at the protected-resource
 * metadata; that document names no authorization server, because this service issues no OAuth
 * tokens: credentials are API keys (and dashboard JWTs) made outside any OAuth flow. A client
 * reading it learns to send a bearer it already has, instead of starting an OAuth dance that
 * cannot succeed (docs/mcp.md, "Why no OAuth authorization server").
 */

/** The base every URL here is built on: PUBLIC_URL when set (behind a proxy), else where the request came. */
const baseOf = (config: Pick<Config, "publicUrl">, url: URL) => (config.publicUrl ?? url.origin).replace(/\/+$/, "");

/** RFC 9728 (section 3.1): the metadata of resource `<base>/mcp` is at `<base>/.well-known/oauth-protected-resource/mcp`. */
export const PRM_PATH = "/.well-known/oauth-protected-resource";

export function protectedResourceMetadata(config: Pick<Config, "publicUrl">, url: URL, resourcePath: "" | "/mcp") {
  const base = baseOf(config, url);
  return {
    resource: `${base}${resourcePath}`,
    resource_name: "Media storage",
    // No authorization_servers: keys are issued by the service itself (POST /api/api-keys).
    bearer_methods_supported: ["header"],
    scopes_supported: [...SCOPES],
    resource_documentation: `${base}/api/docs`,
  };
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

/**
 * MCP clients that find no authorization server fall back to the 2025-03-26 default endpoints
 * at the server's root and start with dynamic client registration (`POST /register`). There is
 * none here; the answer says so in OAuth's own error shape (RFC 7591), so a client that tried
 * OAuth after a 401 shows the person why: the key was refused, and OAuth will not help.
 */
export const NO_OAUTH_MESSAGE =
  "This service issues no OAuth clients or tokens: it takes an API key, sent as Authorization: Bearer <secret>. " +
  "A 401 from it means the key sent was missing, unknown, expired, rotated or deleted: check the key.";

export function noClientRegistration(): Response {
  return new Response(JSON.stringify({ error: "invalid_request", error_description: NO_OAUTH_MESSAGE }), {
    status: 404,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}
