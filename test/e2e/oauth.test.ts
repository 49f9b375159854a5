import { beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createHash } from "node:crypto";
import { inArray } from "drizzle-orm";
import { oauthGrants, oauthSecrets } from "../../db/schema/index.ts";
import { withServerAndOrg } from "../support/fixtures.ts";
import { pkce, registerClient, tokenRequest } from "../support/oauth.ts";
import type { TestOrg, TestServer } from "../support/server.ts";

/**
 * The service as an OAuth 2.1 authorization server for MCP hosts, on the wire: discovery,
 * registration, the authorization request's checks, the consent decision (as the console page
 * sends it), the token endpoint, and the token at /mcp and the REST API. Every refusal the MCP
 * authorization spec names is here; test/browser/oauth-consent.test.ts drives the same flow
 * with the SDK's own client and the consent page in Chromium.
 */
let server: TestServer;
let org: TestOrg;
let clientId: string;
const REDIRECT = "http://127.0.0.1:9/callback";

withServerAndOrg({
  ready: async (ctx) => {
    ({ server, org } = ctx);
  },
});

const mcpResource = () => `${server.url}/mcp`;

function authorizeQuery(over: Record<string, string | null> = {}, challenge = pkce().challenge) {
  const q = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: mcpResource(),
    scope: "read write delete admin",
    state: "st-1",
  });
  for (const [k, v] of Object.entries(over)) v === null ? q.delete(k) : q.set(k, v);
  return q.toString();
}

/** What the consent page sends when the person decides, with their own credential. */
async function decide(secret: string, request: string, body: Record<string, unknown>) {
  const res = await fetch(`${server.url}/authorize/decision`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ request, ...body }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** A fresh code, approved by the org's admin key: the code and its verifier. */
async function approvedCode(choice: { scopes?: string[]; bucketId?: string; resource?: string; secret?: string } = {}) {
  const { verifier, challenge } = pkce();
  const request = authorizeQuery(choice.resource ? { resource: choice.resource } : {}, challenge);
  const res = await decide(choice.secret ?? org.adminKey.secret, request, { approve: true, scopes: choice.scopes ?? ["read"], ...(choice.bucketId ? { bucketId: choice.bucketId } : {}) });
  expect(res.status).toBe(200);
  const back = new URL(res.body.redirect);
  expect(back.origin + back.pathname).toBe(REDIRECT);
  expect(back.searchParams.get("state")).toBe("st-1");
  expect(back.searchParams.get("iss")).toBe(server.url);
  return { code: back.searchParams.get("code")!, verifier };
}

const exchange = (code: string, verifier: string, over: Record<string, string> = {}) =>
  tokenRequest(server, { grant_type: "authorization_code", code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT, resource: mcpResource(), ...over });

async function tokensFor(choice: Parameters<typeof approvedCode>[0] = {}) {
  const { code, verifier } = await approvedCode(choice);
  const res = await exchange(code, verifier, choice.resource ? { resource: choice.resource } : {});
  expect(res.status).toBe(200);
  return res.body as { access_token: string; refresh_token: string; expires_in: number; scope: string; token_type: string };
}

async function mcpTools(token: string): Promise<string[]> {
  const client = new Client({ name: "oauth-e2e", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

/** POST /revoke (RFC 7009), form-encoded as OAuth clients send it. */
async function revoke(params: Record<string, string>) {
  const res = await fetch(`${server.url}/revoke`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(params) });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

const mcpPost = (token: string) =>
  fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });

describe("OAuth 2.1 for MCP clients", () => {
  beforeAll(async () => {
    const reg = await registerClient(server, { client_name: "Test host", redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_basic" });
    expect(reg.status).toBe(201);
    clientId = reg.body.client_id;
  });

  test("discovery: the protected-resource documents name this service; its metadata (RFC 8414) names the endpoints", async () => {
    for (const path of ["/mcp", ""]) {
      const prm = await (await fetch(`${server.url}/.well-known/oauth-protected-resource${path}`)).json();
      expect(prm.authorization_servers).toEqual([server.url]);
    }
    const meta = await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json();
    expect(meta).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/authorize`,
      token_endpoint: `${server.url}/token`,
      registration_endpoint: `${server.url}/register`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
    });
  });

  test("registration (RFC 7591): public clients only; redirect URIs https or loopback http", async () => {
    const ok = await registerClient(server, { client_name: "Web host", redirect_uris: ["https://host.example/cb", "http://localhost:33418/cb", "http://[::1]:1/cb"] });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ client_name: "Web host", token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] });
    expect(ok.body.client_id).toStartWith("mcc_");
    expect(ok.body).not.toHaveProperty("client_secret");
    for (const uri of ["http://host.example/cb", "myapp://cb", "https://host.example/cb#x", "not a url"]) {
      const bad = await registerClient(server, { redirect_uris: [uri] });
      expect({ uri, status: bad.status, error: bad.body.error }).toEqual({ uri, status: 400, error: "invalid_redirect_uri" });
    }
    expect((await registerClient(server, {})).body.error).toBe("invalid_client_metadata");
    expect((await registerClient(server, { redirect_uris: [REDIRECT], grant_types: ["client_credentials"] })).body.error).toBe("invalid_client_metadata");
  });

  test("the authorization endpoint hands a valid request to the console's consent page", async () => {
    const query = authorizeQuery();
    const res = await fetch(`${server.url}/authorize?${query}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`/console/oauth/consent?${query}`);
    const shown = await (await fetch(`${server.url}/authorize/request?${query}`)).json();
    expect(shown).toEqual({ clientId, clientName: "Test host", redirectUri: REDIRECT, resource: mcpResource(), scopes: ["read", "write", "delete", "admin"] });
  });

  test("wrong redirect URI or unknown client: told to the person (400), never redirected", async () => {
    const cases: Record<string, string | null>[] = [{ redirect_uri: "https://evil.example/cb" }, { redirect_uri: null }, { client_id: "mcc_nobody" }];
    for (const over of cases) {
      const res = await fetch(`${server.url}/authorize?${authorizeQuery(over)}`, { redirect: "manual" });
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect((await res.json()).error.code).toBe("bad_request");
    }
    // Nor can the consent page be made to send a code there.
    const res = await decide(org.adminKey.secret, authorizeQuery({ redirect_uri: "https://evil.example/cb" }), { approve: true, scopes: ["read"] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("is not one Test host registered");
  });

  test("other bad requests go back to the client: no PKCE, plain PKCE, another resource, an unknown scope", async () => {
    const cases: [Record<string, string | null>, string][] = [
      [{ code_challenge: null }, "invalid_request"],
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ resource: "https://other.example/mcp" }, "invalid_target"],
      [{ scope: "read superuser" }, "invalid_scope"],
      [{ response_type: "token" }, "unsupported_response_type"],
    ];
    for (const [over, error] of cases) {
      const res = await fetch(`${server.url}/authorize?${authorizeQuery(over)}`, { redirect: "manual" });
      expect(res.status).toBe(302);
      const back = new URL(res.headers.get("location")!);
      expect({ over, to: back.origin + back.pathname, error: back.searchParams.get("error"), state: back.searchParams.get("state") }).toEqual({ over, to: REDIRECT, error, state: "st-1" });
    }
  });

  test("approved: the code buys tokens bound to /mcp; tools/list lists what the picked scopes allow", async () => {
    const tokens = await tokensFor({ scopes: ["read"] });
    expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "read" });
    expect(tokens.access_token).toStartWith("mat_");
    const names = await mcpTools(tokens.access_token);
    expect(names).toContain("buckets_list");
    expect(names).not.toContain("buckets_create");
    const full = await mcpTools((await tokensFor({ scopes: ["admin"] })).access_token);
    expect(full).toContain("buckets_create");
    expect(full).toContain("oauth_grants_list");
  });

  test("a person picks within their own credential: a read key cannot approve write", async () => {
    const reader = await org.keyClient(["read"]);
    const res = await decide(reader.secret, authorizeQuery(), { approve: true, scopes: ["read", "write"] });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("Cannot grant scopes this credential lacks: write");
    // Nor more than the client asked for.
    const narrow = await decide(org.adminKey.secret, authorizeQuery({ scope: "read" }), { approve: true, scopes: ["admin"] });
    expect(narrow.status).toBe(403);
  });

  test("one bucket: the token sees only that bucket", async () => {
    const a = await org.admin.post("/api/buckets", { name: `oauth-a-${crypto.randomUUID().slice(0, 8)}` });
    await org.admin.post("/api/buckets", { name: `oauth-b-${crypto.randomUUID().slice(0, 8)}` });
    const tokens = await tokensFor({ scopes: ["read"], bucketId: a.body.id, resource: server.url });
    const listed = await org.admin.withToken(tokens.access_token).get("/api/buckets");
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((b: { id: string }) => b.id)).toEqual([a.body.id]);
  });

  test("declined: the client hears access_denied", async () => {
    const res = await decide(org.adminKey.secret, authorizeQuery(), { approve: false });
    const back = new URL(res.body.redirect);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("code")).toBeNull();
  });

  test("PKCE mismatch is refused", async () => {
    const { code } = await approvedCode();
    const res = await exchange(code, pkce().verifier);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "invalid_grant", error_description: expect.stringContaining("PKCE verification failed") });
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  test("a code for another redirect URI or client is refused", async () => {
    const { code, verifier } = await approvedCode();
    expect((await exchange(code, verifier, { redirect_uri: "http://127.0.0.1:9/other" })).body.error).toBe("invalid_grant");
    const second = await approvedCode();
    expect((await exchange(second.code, second.verifier, { client_id: "mcc_someone_else" })).body.error).toBe("invalid_grant");
  });

  test("a reused code is refused, and the tokens it bought are revoked with its grant", async () => {
    const { code, verifier } = await approvedCode();
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    expect((await mcpPost(first.body.access_token)).status).toBe(200);
    const again = await exchange(code, verifier);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
    expect(again.body.error_description).toContain("already used");
    expect((await mcpPost(first.body.access_token)).status).toBe(401);
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: first.body.refresh_token, client_id: clientId })).body.error).toBe("invalid_grant");
  });

  test("wrong audience: a token for the REST API is refused at /mcp with 401 pointing at the metadata, and the other way round", async () => {
    const api = await tokensFor({ resource: server.url });
    const atMcp = await mcpPost(api.access_token);
    expect(atMcp.status).toBe(401);
    expect(atMcp.headers.get("www-authenticate")).toStartWith(`Bearer error="invalid_token", resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`);
    expect((await atMcp.json()).error.message).toContain(`issued for ${server.url}, not ${server.url}/mcp`);
    expect((await org.admin.withToken(api.access_token).get("/api/buckets")).status).toBe(200);

    const mcp = await tokensFor();
    const atRest = await org.admin.withToken(mcp.access_token).get("/api/buckets");
    expect(atRest.status).toBe(401);
    expect(atRest.headers.get("www-authenticate")).toStartWith(`Bearer error="invalid_token", resource_metadata="${server.url}/.well-known/oauth-protected-resource"`);
    // A token asked for another resource at the token endpoint is refused there.
    const { code, verifier } = await approvedCode();
    expect((await exchange(code, verifier, { resource: "https://other.example/mcp" })).body.error).toBe("invalid_target");
  });

  test("refresh tokens rotate; presenting a spent one revokes the grant", async () => {
    const tokens = await tokensFor();
    const refresh = (token: string) => tokenRequest(server, { grant_type: "refresh_token", refresh_token: token, client_id: clientId, resource: mcpResource() });
    const next = await refresh(tokens.refresh_token);
    expect(next.status).toBe(200);
    expect(next.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(next.body.access_token).not.toBe(tokens.access_token);
    expect((await mcpPost(next.body.access_token)).status).toBe(200);
    const reuse = await refresh(tokens.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe("invalid_grant");
    // Whoever replayed it and whoever holds the newer pair are both out.
    expect((await mcpPost(next.body.access_token)).status).toBe(401);
    expect((await refresh(next.body.refresh_token)).body.error).toBe("invalid_grant");
  });

  test("grants are listed and revocable through the tools; a revoked grant's tokens stop at once; each step is in the audit log", async () => {
    const tokens = await tokensFor();
    const grants = await org.admin.get("/api/oauth-grants");
    expect(grants.status).toBe(200);
    const grant = grants.body.data[0];
    expect(grant).toMatchObject({ clientId, clientName: "Test host", scopes: ["read"], resource: mcpResource(), active: true, revokedAt: null });
    const refreshed = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId });
    expect(refreshed.status).toBe(200);

    const revoked = await org.admin.post(`/api/oauth-grants/${grant.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: grant.id, active: false });
    expect(revoked.body.refreshedAt).not.toBeNull();
    expect((await org.admin.post(`/api/oauth-grants/${grant.id}/revoke`)).body.revokedAt).toBe(revoked.body.revokedAt);
    expect((await mcpPost(refreshed.body.access_token)).status).toBe(401);
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token, client_id: clientId })).body.error).toBe("invalid_grant");

    const audit = await org.admin.get(`/api/audit?targetId=${grant.id}`);
    expect(audit.body.data.map((e: { action: string }) => e.action).sort()).toEqual(["oauth_grant_created", "oauth_grant_refreshed", "oauth_grants_revoke", "oauth_grants_revoke"]);
    const reused = await tokensFor();
    const reusedGrant = (await org.admin.get("/api/oauth-grants?limit=1")).body.data[0].id;
    await tokenRequest(server, { grant_type: "refresh_token", refresh_token: reused.refresh_token, client_id: clientId });
    await tokenRequest(server, { grant_type: "refresh_token", refresh_token: reused.refresh_token, client_id: clientId });
    const system = await org.admin.get(`/api/audit?targetId=${reusedGrant}&action=oauth_grant_revoked`);
    expect(system.body.data).toHaveLength(1);
    expect(system.body.data[0].actor.type).toBe("system");
  });

  test("me_get and GET /api/me name an OAuth token as oauth, with its grant and client; a key it creates ends with the grant", async () => {
    const bucket = await org.admin.post("/api/buckets", { name: `oauth-me-${crypto.randomUUID().slice(0, 8)}` });
    const rest = await tokensFor({ scopes: ["admin"], bucketId: bucket.body.id, resource: server.url });
    const grant = (await org.admin.get("/api/oauth-grants?limit=1")).body.data[0];
    const me = await org.admin.withToken(rest.access_token).get("/api/me");
    expect(me.status).toBe(200);
    expect(me.body.credential).toEqual({
      type: "oauth",
      apiKeyId: null,
      serviceCredentialId: null,
      oauthGrantId: grant.id,
      accessKeyId: clientId,
      scopes: ["read", "write", "delete", "admin"],
      bucketId: bucket.body.id,
      expiresAt: grant.expiresAt,
    });
    // Over MCP, with a token for /mcp: the same answer, and the line an agent reads says oauth.
    const client = new Client({ name: "oauth-me", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${(await tokensFor()).access_token}` } } }));
    try {
      const result = await client.callTool({ name: "me_get", arguments: {} });
      expect((result.structuredContent as { credential: { type: string; accessKeyId: string } }).credential).toMatchObject({ type: "oauth", accessKeyId: clientId });
      expect((result.content as { text: string }[])[0]!.text).toStartWith(`oauth ${clientId} in organization`);
    } finally {
      await client.close();
    }
    // A client a person approved cannot mint a key that outlives the approval.
    const key = await org.admin.withToken(rest.access_token).post("/api/api-keys", { name: "from oauth", scopes: ["read"], bucketId: bucket.body.id, expiresInDays: 365 });
    expect(key.status).toBe(201);
    expect(key.body.expiresAt).toBe(grant.expiresAt);
    expect(key.body.note).toContain("capped");
  });

  test("revocation (RFC 7009): revoking a refresh token ends its grant; it then fails at /token and its access token at /mcp", async () => {
    const meta = await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json();
    expect(meta).toMatchObject({ revocation_endpoint: `${server.url}/revoke`, revocation_endpoint_auth_methods_supported: ["none"] });
    const tokens = await tokensFor();
    const grant = (await org.admin.get("/api/oauth-grants?limit=1")).body.data[0];
    expect((await mcpPost(tokens.access_token)).status).toBe(200);
    const res = await revoke({ token: tokens.refresh_token, token_type_hint: "refresh_token", client_id: clientId });
    expect({ status: res.status, body: res.body, cacheControl: res.headers.get("cache-control") }).toEqual({ status: 200, body: "", cacheControl: "no-store" });
    const refreshed = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId });
    expect([refreshed.status, refreshed.body.error]).toEqual([400, "invalid_grant"]);
    expect((await mcpPost(tokens.access_token)).status).toBe(401);
    expect((await org.admin.get("/api/oauth-grants?limit=1")).body.data[0]).toMatchObject({ id: grant.id, active: false, revokedAt: expect.any(String) });
    const audit = await org.admin.get(`/api/audit?targetId=${grant.id}&action=oauth_grant_revoked`);
    expect(audit.body.data.map((e: { actor: { type: string } }) => e.actor.type)).toEqual(["user"]);
    // Revoked already, or never issued: the same 200 (the client's aim holds), and nothing more is written.
    expect((await revoke({ token: tokens.refresh_token, client_id: clientId })).status).toBe(200);
    expect((await revoke({ token: "mrt_never-issued", client_id: clientId })).status).toBe(200);
    expect((await org.admin.get(`/api/audit?targetId=${grant.id}&action=oauth_grant_revoked`)).body.data).toHaveLength(1);
  });

  test("revocation of an access token ends that token only; the grant refreshes on", async () => {
    const tokens = await tokensFor();
    const res = await revoke({ token: tokens.access_token, token_type_hint: "access_token", client_id: clientId });
    expect(res.status).toBe(200);
    expect((await mcpPost(tokens.access_token)).status).toBe(401);
    const next = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId });
    expect(next.status).toBe(200);
    expect((await mcpPost(next.body.access_token)).status).toBe(200);
  });

  test("revocation refusals: no token, no client_id, another client's token (which keeps working)", async () => {
    const tokens = await tokensFor();
    const other = (await registerClient(server, { client_name: "Other host", redirect_uris: [REDIRECT] })).body.client_id;
    const cases: [Record<string, string>, string][] = [
      [{ client_id: clientId }, "invalid_request"],
      [{ token: tokens.refresh_token }, "invalid_request"],
      [{ token: tokens.refresh_token, client_id: other }, "unauthorized_client"],
      [{ token: tokens.access_token, client_id: other }, "unauthorized_client"],
    ];
    for (const [params, error] of cases) {
      const res = await revoke(params);
      expect({ params, status: res.status, error: JSON.parse(res.body).error }).toEqual({ params, status: 400, error });
    }
    expect((await mcpPost(tokens.access_token)).status).toBe(200);
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId })).status).toBe(200);
  });

  test("an OAuth token cannot approve more grants", async () => {
    const tokens = await tokensFor({ scopes: ["admin"], resource: server.url });
    const res = await decide(tokens.access_token, authorizeQuery(), { approve: true, scopes: ["read"] });
    expect(res.status).toBe(403);
  });

  test("codes, access and refresh tokens are stored only as SHA-256", async () => {
    const { code, verifier } = await approvedCode();
    const codeHash = createHash("sha256").update(code).digest("hex");
    const res = await exchange(code, verifier);
    const { access_token, refresh_token } = res.body;
    const hashes = [code, access_token, refresh_token].map((v: string) => createHash("sha256").update(v).digest("hex"));
    const db = server.services.deps.db;
    const stored = await db.select().from(oauthSecrets).where(inArray(oauthSecrets.hash, hashes));
    expect(stored.map((r) => r.kind).sort()).toEqual(["access", "code", "refresh"]);
    expect(stored.find((r) => r.kind === "code")!.hash).toBe(codeHash);
    const dump = JSON.stringify(await db.select().from(oauthSecrets)) + JSON.stringify(await db.select().from(oauthGrants));
    for (const secret of [code, access_token, refresh_token]) expect(dump).not.toContain(secret);
  });

  test("the token endpoint refuses other grant types in OAuth's shape", async () => {
    const res = await tokenRequest(server, { grant_type: "client_credentials", client_id: clientId });
    expect(res.body.error).toBe("unsupported_grant_type");
    expect((await tokenRequest(server, { grant_type: "authorization_code", client_id: clientId, code: "x", code_verifier: pkce().verifier })).body.error).toBe("invalid_grant");
  });
});
