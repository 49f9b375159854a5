import { SCOPES, type Scope } from "./caller.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { findClient, type OAuthClient } from "./oauth-clients.ts";
import { OAuthRedirect } from "./oauth-errors.ts";

/**
 * The audiences (RFC 8707 resources) this service issues tokens for: its MCP endpoint, which
 * MCP hosts ask for, and its REST API. A token is accepted only by the one it names.
 */
export function resourcesOf(base: string) {
  return { mcp: `${base}/mcp`, api: base };
}

/** An authorization request (RFC 6749 section 4.1.1 with PKCE) whose every parameter was checked. */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  /** What the client asked for; the person picks within it (and within their own credential). */
  scopes: Scope[];
  state: string | null;
}

/** The client's redirect URI with the given parameters and the issuer (RFC 9207), which lets a client tell servers apart. */
export function redirectTo(redirectUri: string, issuer: string, state: string | null, params: Record<string, string>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (state !== null) url.searchParams.set("state", state);
  url.searchParams.set("iss", issuer);
  return url.toString();
}

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Reads an authorization request. An unknown client or a redirect URI it did not register is
 * told to the person (400): sending anything to an unverified address would make this service
 * an open redirector. Every later problem goes back to the client at its redirect URI.
 */
export async function readAuthorizationRequest(deps: Deps, base: string, params: URLSearchParams): Promise<AuthorizationRequest> {
  const clientId = params.get("client_id");
  if (!clientId) throw errors.badRequest("client_id is missing: the application must register (POST /register) and send its client_id");
  const client = await findClient(deps, clientId);
  if (!client) throw errors.badRequest(`No client ${clientId} is registered here: the application must register again (POST /register)`);
  const redirectUri = params.get("redirect_uri");
  if (!redirectUri || !client.redirectUris.includes(redirectUri)) {
    throw errors.badRequest(`redirect_uri ${redirectUri ?? "(missing)"} is not one ${client.name} registered; it registered ${client.redirectUris.join(", ")}`);
  }
  const state = params.get("state");
  const refuse = (error: string, description: string) => new OAuthRedirect(redirectTo(redirectUri, base, state, { error, error_description: description }));
  if (params.get("response_type") !== "code") throw refuse("unsupported_response_type", "response_type must be code");
  const codeChallenge = params.get("code_challenge");
  if (!codeChallenge) throw refuse("invalid_request", "PKCE is required: send code_challenge and code_challenge_method=S256");
  if (params.get("code_challenge_method") !== "S256") throw refuse("invalid_request", "code_challenge_method must be S256 (plain is not accepted)");
  if (!CHALLENGE.test(codeChallenge)) throw refuse("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters)");
  const resources = resourcesOf(base);
  const resource = params.get("resource") ?? resources.mcp;
  if (resource !== resources.mcp && resource !== resources.api) {
    throw refuse("invalid_target", `resource must be ${resources.mcp} (MCP) or ${resources.api} (REST API), not ${resource}`);
  }
  const asked = (params.get("scope") ?? "").split(" ").filter(Boolean);
  const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw refuse("invalid_scope", `Unknown scope ${unknown.join(", ")}; the scopes are ${SCOPES.join(", ")}`);
  const scopes = asked.length > 0 ? ([...new Set(asked)] as Scope[]) : [...SCOPES];
  return { client, redirectUri, codeChallenge, resource, scopes, state };
}
