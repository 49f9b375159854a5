import { createHash, randomBytes } from "node:crypto";
import type { TestServer } from "./server.ts";

/** A PKCE pair (RFC 7636, S256). */
export function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export async function registerClient(server: TestServer, metadata: Record<string, unknown>) {
  const res = await fetch(`${server.url}/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(metadata) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

export async function tokenRequest(server: TestServer, params: Record<string, string>) {
  const res = await fetch(`${server.url}/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(params) });
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
}

/**
 * A grant as a person makes one through the consent page: a client registered, then the
 * decision sent with the person's credential (`secret`). Returns the grant's id.
 */
export async function approvedGrant(baseUrl: string, secret: string, choice: { scopes: string[]; bucketId?: string }): Promise<string> {
  const redirect = "http://127.0.0.1:9/callback";
  const registered = await fetch(`${baseUrl}/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_name: "Fixture host", redirect_uris: [redirect] }) });
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const request = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirect,
    code_challenge: pkce().challenge,
    code_challenge_method: "S256",
    resource: `${baseUrl}/mcp`,
    scope: choice.scopes.join(" "),
    state: "fixture",
  }).toString();
  const decided = await fetch(`${baseUrl}/authorize/decision`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ request, approve: true, scopes: choice.scopes, ...(choice.bucketId ? { bucketId: choice.bucketId } : {}) }),
  });
  if (decided.status !== 200) throw new Error(`approving a grant failed: ${decided.status} ${await decided.text()}`);
  const listed = await fetch(`${baseUrl}/api/oauth-grants?limit=100`, { headers: { authorization: `Bearer ${secret}` } });
  const grant = ((await listed.json()) as { data: { id: string; clientId: string }[] }).data.find((g) => g.clientId === clientId);
  if (!grant) throw new Error("the approved grant is not listed");
  return grant.id;
}
