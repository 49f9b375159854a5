import { z } from "zod";
import { SCOPES, scope } from "../contract/common.ts";
import { authenticate } from "../domain/access/auth.ts";
import { registerClient } from "../domain/access/oauth-clients.ts";
import { OAuthError, OAuthRedirect } from "../domain/access/oauth-errors.ts";
import { approveGrant, denyGrant } from "../domain/access/oauth-grants.ts";
import { readAuthorizationRequest } from "../domain/access/oauth-requests.ts";
import { exchangeCode, refreshGrant, revokeToken } from "../domain/access/oauth-tokens.ts";
import type { Deps } from "../domain/core/deps.ts";
import { errors } from "../domain/core/errors.ts";
import { readBody, readJsonObject } from "./body.ts";
import type { HttpContext } from "./pipeline.ts";
import { baseOf } from "./protected-resource.ts";
import { json } from "./respond.ts";

/**
 * This service as its own OAuth 2.1 authorization server, for MCP hosts that only speak OAuth
 * (the MCP authorization spec): metadata (RFC 8414), dynamic registration (RFC 7591), the
 * authorization endpoint, which hands the person to the console's consent page, and the token
 * endpoint (authorization code with PKCE S256, rotating refresh tokens, RFC 8707 resources),
 * and the revocation endpoint (RFC 7009).
 */
export const OAUTH_METADATA_PATH = "/.well-known/oauth-authorization-server";
/** The console page a person approves or declines on (console/app/pages/consent.tsx). */
export const CONSENT_PAGE = "/console/oauth/consent";

export interface OAuthRoute {
  method: "GET" | "POST";
  path: string;
  handler: (ctx: HttpContext) => Promise<Response>;
}

/** Token and registration answers are never cached (RFC 6749 section 5.1). */
const noStore = { "cache-control": "no-store" };
const oauthError = (err: OAuthError) => json(err.status, { error: err.error, error_description: err.description }, noStore);
const redirect = (location: string) => new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } });

export function authorizationServerMetadata(base: string) {
  return {
    issuer: base,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    registration_endpoint: `${base}/register`,
    revocation_endpoint: `${base}/revoke`,
    revocation_endpoint_auth_methods_supported: ["none"],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    scopes_supported: [...SCOPES],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${base}/api/docs`,
  };
}

const decision = z.object({
  /** The authorization request's query string, as the consent page received it. */
  request: z.string().max(8000),
  approve: z.boolean(),
  scopes: z.array(scope).max(SCOPES.length).default([]),
  bucketId: z.uuid().optional(),
});

export function oauthRoutes(deps: Deps): OAuthRoute[] {
  const base = (ctx: HttpContext) => baseOf(deps.config, ctx.url);
  return [
    { method: "GET", path: OAUTH_METADATA_PATH, handler: async (ctx) => json(200, authorizationServerMetadata(base(ctx))) },
    {
      method: "POST",
      path: "/register",
      handler: async (ctx) => {
        try {
          let body: unknown;
          try {
            body = await readJsonObject(ctx.request, deps.config.maxBodyBytes);
          } catch {
            throw new OAuthError("invalid_client_metadata", "The body must be a JSON object of client metadata (RFC 7591)");
          }
          return json(201, await registerClient(deps, body), noStore);
        } catch (err) {
          if (err instanceof OAuthError) return oauthError(err);
          throw err;
        }
      },
    },
    {
      // Checked here before the person sees anything: a refusal the client must hear goes back to it.
      method: "GET",
      path: "/authorize",
      handler: async (ctx) => {
        try {
          await readAuthorizationRequest(deps, base(ctx), ctx.url.searchParams);
          return redirect(`${CONSENT_PAGE}${ctx.url.search}`);
        } catch (err) {
          if (err instanceof OAuthRedirect) return redirect(err.location);
          throw err;
        }
      },
    },
    {
      // What the consent page shows: the client's name and redirect URI, the scopes it asked for.
      method: "GET",
      path: "/authorize/request",
      handler: async (ctx) => {
        const req = await readChecked(deps, base(ctx), ctx.url.searchParams);
        return json(200, { clientId: req.client.id, clientName: req.client.name, redirectUri: req.redirectUri, resource: req.resource, scopes: req.scopes });
      },
    },
    {
      method: "POST",
      path: "/authorize/decision",
      handler: async (ctx) => {
        const caller = await authenticate(deps, ctx.request.headers.get("authorization"), base(ctx));
        const parsed = decision.safeParse(await readJsonObject(ctx.request, deps.config.maxBodyBytes));
        if (!parsed.success) throw errors.validation(parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })));
        const req = await readChecked(deps, base(ctx), new URLSearchParams(parsed.data.request));
        if (!parsed.data.approve) return json(200, denyGrant(base(ctx), req));
        if (parsed.data.scopes.length === 0) throw errors.validation([{ path: "scopes", message: "Pick at least one scope to approve" }]);
        const { redirect: location } = await approveGrant(deps, caller, base(ctx), req, { scopes: parsed.data.scopes, bucketId: parsed.data.bucketId });
        return json(200, { redirect: location });
      },
    },
    {
      method: "POST",
      path: "/token",
      handler: async (ctx) => {
        try {
          const params = new URLSearchParams(await readBody(ctx.request, deps.config.maxBodyBytes));
          const grantType = params.get("grant_type");
          if (grantType === "authorization_code") return json(200, await exchangeCode(deps, params), noStore);
          if (grantType === "refresh_token") return json(200, await refreshGrant(deps, params), noStore);
          throw new OAuthError("unsupported_grant_type", `grant_type must be authorization_code or refresh_token, not ${grantType ?? "(missing)"}`);
        } catch (err) {
          if (err instanceof OAuthError) return oauthError(err);
          throw err;
        }
      },
    },
    {
      method: "POST",
      path: "/revoke",
      handler: async (ctx) => {
        try {
          await revokeToken(deps, new URLSearchParams(await readBody(ctx.request, deps.config.maxBodyBytes)));
          return new Response(null, { status: 200, headers: noStore });
        } catch (err) {
          if (err instanceof OAuthError) return oauthError(err);
          throw err;
        }
      },
    },
  ];
}

/** The consent page only ever deals with requests /authorize accepted; anything else is a 400 for the person. */
async function readChecked(deps: Deps, base: string, params: URLSearchParams) {
  try {
    return await readAuthorizationRequest(deps, base, params);
  } catch (err) {
    if (err instanceof OAuthRedirect) throw errors.badRequest(`This authorization request is not valid: ${new URL(err.location).searchParams.get("error_description")}`);
    throw err;
  }
}
