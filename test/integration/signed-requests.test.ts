import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ManualClock } from "../../domain/core/clock.ts";
import { signRequest } from "../../domain/access/http-signatures.ts";
import { authenticateSigned } from "../../domain/access/signed-requests.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * Service-to-service calls signed with HTTP Message Signatures (docs/signed-requests.md):
 * a service credential acts in its organization with its scopes and bucket, and a request
 * that was altered, replayed, signed too long ago or with another key is refused.
 */
const clock = new ManualClock();
let server: TestServer;
let org: TestOrg;
let credential: { id: string; keyId: string; secret: string };

const PUBLIC_URL = "https://media.example.test";

beforeAll(async () => {
  server = await startServer({ clock, env: { PUBLIC_URL } });
  org = await newOrg(server);
  credential = await create({ name: "thumbnailer", scopes: ["read", "write"] });
});
afterAll(() => server.stop());

async function create(body: Record<string, unknown>) {
  const res = await org.admin.post("/api/service-credentials", body);
  expect(res.status).toBe(201);
  return res.body as { id: string; keyId: string; secret: string };
}

const now = () => Math.floor(clock.now().getTime() / 1000);

/** A signed request as a client sends it; `tamper` changes it after signing. */
async function signed(
  method: string,
  path: string,
  body?: unknown,
  opts: { key?: { keyId: string; secret: string }; created?: number; signedUrl?: string; headers?: Record<string, string>; tamper?: (r: { url: string; method: string; body?: Uint8Array; headers: Record<string, string> }) => void } = {},
) {
  const url = `${server.url}${path}`;
  const bytes = body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(body));
  const headers = { ...signRequest({ method, url: opts.signedUrl ?? url, body: bytes }, opts.key ?? credential, { now: opts.created ?? now() }), ...opts.headers };
  const request = { url, method, body: bytes, headers };
  opts.tamper?.(request);
  const res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: request.headers };
}

function expectRefused(res: { status: number; body: any }, why: RegExp) {
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe("unauthorized");
  expect(res.body.error.message).toMatch(why);
}

describe("service credentials", () => {
  test("the secret is shown once; lists name the keyId, never the secret", async () => {
    expect(credential.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(credential.keyId).toMatch(/^MSS[A-Z2-7]{17}$/);
    const list = await org.admin.get("/api/service-credentials");
    expect(list.body.data.map((c: any) => c.keyId)).toContain(credential.keyId);
    expect(JSON.stringify(list.body)).not.toContain(credential.secret);
  });

  test("a signed request acts in the credential's organization, as the credential", async () => {
    const me = await signed("GET", "/api/me");
    expect(me.status).toBe(200);
    expect(me.body.organization.id).toBe(org.orgId);
    expect(me.body.credential).toMatchObject({ type: "service_credential", serviceCredentialId: credential.id, accessKeyId: credential.keyId, scopes: ["read", "write"] });
    const bucket = await signed("POST", "/api/buckets", { name: "from-a-service" });
    expect(bucket.status).toBe(201);
    const listed = await org.admin.get("/api/buckets");
    expect(listed.body.data.map((b: any) => b.id)).toContain(bucket.body.id);
    // The audit log names the credential that signed.
    const audit = await org.admin.get("/api/audit?action=buckets_create");
    expect(audit.body.data[0]).toMatchObject({ actor: { type: "service_credential", serviceCredentialId: credential.id, apiKeyId: null }, targets: { id: bucket.body.id } });
  });

  test("the URI may be the one received or the one under PUBLIC_URL", async () => {
    expect((await signed("GET", "/api/buckets?limit=5", undefined, { signedUrl: `${PUBLIC_URL}/api/buckets?limit=5` })).status).toBe(200);
    expectRefused(await signed("GET", "/api/buckets?limit=5", undefined, { signedUrl: "https://elsewhere.example/api/buckets?limit=5" }), /does not verify/);
  });

  test("scopes and the bucket restriction apply as for an API key", async () => {
    const mine = (await org.admin.post("/api/buckets", { name: "service-own" })).body;
    const theirs = (await org.admin.post("/api/buckets", { name: "service-other" })).body;
    const restricted = await create({ name: "one bucket", scopes: ["read"], bucketId: mine.id });
    expect((await signed("GET", `/api/buckets/${mine.id}`, undefined, { key: restricted })).status).toBe(200);
    const other = await signed("GET", `/api/buckets/${theirs.id}`, undefined, { key: restricted });
    expect(other.status).toBe(403);
    expect((await signed("POST", "/api/buckets", { name: "nope" }, { key: restricted })).status).toBe(403);
    // What it may create never exceeds it.
    const created = await signed("POST", "/api/service-credentials", { name: "wider" }, { key: credential });
    expect(created.status).toBe(403);
  });

  test("MCP takes signed requests too", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      fetch: async (url, init) => {
        const body = typeof init?.body === "string" ? new TextEncoder().encode(init.body) : undefined;
        const headers = new Headers(init?.headers);
        for (const [k, v] of Object.entries(signRequest({ method: init?.method ?? "GET", url: String(url), body }, credential, { now: now() }))) headers.set(k, v);
        return fetch(url, { ...init, headers, body });
      },
    });
    const client = new Client({ name: "signed", version: "1" });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("buckets_list");
    expect(tools.map((t) => t.name)).not.toContain("api_keys_create");
    await client.close();
  });
});

describe("what is refused", () => {
  test("a body changed after signing", async () => {
    const res = await signed("POST", "/api/buckets", { name: "signed-name" }, { tamper: (r) => void (r.body = new TextEncoder().encode(JSON.stringify({ name: "other-name" }))) });
    expectRefused(res, /body does not match Content-Digest/);
  });

  test("a digest changed to match a changed body", async () => {
    const changed = new TextEncoder().encode(JSON.stringify({ name: "other-name" }));
    const res = await signed("POST", "/api/buckets", { name: "signed-name" }, {
      tamper: (r) => {
        r.body = changed;
        r.headers["content-digest"] = `sha-256=:${createHash("sha256").update(changed).digest("base64")}:`;
      },
    });
    expectRefused(res, /does not verify/);
  });

  test("another method, path or query than the one signed", async () => {
    expectRefused(await signed("GET", "/api/buckets?limit=1", undefined, { tamper: (r) => void (r.url = r.url.replace("limit=1", "limit=2")) }), /does not verify/);
    expectRefused(await signed("GET", "/api/buckets", undefined, { tamper: (r) => void (r.url = r.url.replace("/buckets", "/tags")) }), /does not verify/);
    expectRefused(await signed("DELETE", `/api/buckets/${crypto.randomUUID()}`, undefined, { tamper: (r) => void (r.method = "GET") }), /does not verify/);
  });

  test("the same signature twice (a replay)", async () => {
    const first = await signed("GET", "/api/me");
    expect(first.status).toBe(200);
    const again = await fetch(`${server.url}/api/me`, { headers: first.headers });
    expectRefused({ status: again.status, body: await again.json() }, /used before/);
  });

  test("a signature made more than five minutes away from the service's clock, either way", async () => {
    expectRefused(await signed("GET", "/api/me", undefined, { created: now() - 301 }), /30\d s in the past/);
    expectRefused(await signed("GET", "/api/me", undefined, { created: now() + 301 }), /(299|30\d) s in the future/);
    expect((await signed("GET", "/api/me", undefined, { created: now() - 290 })).status).toBe(200);
    expect((await signed("GET", "/api/me", undefined, { created: now() + 290 })).status).toBe(200);
  });

  test("a known keyid with a forged signature and a body off its digest learns nothing more than an unknown keyid", async () => {
    const body = new TextEncoder().encode(JSON.stringify({ name: "other-name" }));
    const forged = (keyId: string) => signed("POST", "/api/buckets", { name: "signed-name" }, { key: { keyId, secret: "e".repeat(64) }, tamper: (r) => void (r.body = body) });
    const known = await forged(credential.keyId);
    const unknown = await forged("MSSNOSUCHKEY234567ABC");
    expectRefused(known, /does not verify/);
    expect(known.body.error.message).toBe(unknown.body.error.message);
  });

  test("a wrong key: another secret, or a keyid nobody has", async () => {
    expectRefused(await signed("GET", "/api/me", undefined, { key: { keyId: credential.keyId, secret: "f".repeat(64) } }), /does not verify/);
    expectRefused(await signed("GET", "/api/me", undefined, { key: { keyId: "MSSNOSUCHKEY234567ABC", secret: credential.secret } }), /does not verify/);
  });

  test("a missing or unusable Content-Digest", async () => {
    expectRefused(await signed("GET", "/api/me", undefined, { tamper: (r) => void delete r.headers["content-digest"] }), /Content-Digest is required/);
    expectRefused(await signed("GET", "/api/me", undefined, { headers: { "content-digest": "md5=:AAAA:" } }), /sha-256 or sha-512/);
  });

  test("malformed signature headers, other components or algorithms", async () => {
    expectRefused(await signed("GET", "/api/me", undefined, { tamper: (r) => void delete r.headers.signature }), /both Signature-Input and Signature/);
    expectRefused(await signed("GET", "/api/me", undefined, { tamper: (r) => void (r.headers["signature-input"] = "sig1=(\"@method\");created=1;keyid=\"x\";alg=\"hmac-sha256\"") }), /cover exactly/);
    expectRefused(await signed("GET", "/api/me", undefined, { tamper: (r) => void (r.headers["signature-input"] = r.headers["signature-input"]!.replace("hmac-sha256", "ed25519")) }), /alg/);
    expectRefused(await signed("GET", "/api/me", undefined, { tamper: (r) => void (r.headers.signature = "sig1=:not base64 at all") }), /structured-field/);
  });

  test("a bearer and a signature together", async () => {
    expectRefused(await signed("GET", "/api/me", undefined, { headers: { authorization: `Bearer ${org.adminKey.secret}` } }), /either Authorization or a signature/);
  });

  test("while the store of seen signatures is unreachable: 503, not a replay let through", async () => {
    const url = `${server.url}/api/me`;
    const headers = new Headers(signRequest({ method: "GET", url }, credential, { now: now() }));
    const unreachable = { firstUse: async () => Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })) };
    const attempt = authenticateSigned(server.services.deps, unreachable, { method: "GET", targetUris: [url], headers, body: new Uint8Array() });
    await expect(attempt).rejects.toMatchObject({ code: "unavailable", status: 503 });
  });

  test("an expired or deleted credential", async () => {
    const short = await create({ name: "short", expiresInDays: 1 });
    expect((await signed("GET", "/api/me", undefined, { key: short })).status).toBe(200);
    clock.advance(86_400_000 + 1000);
    try {
      expectRefused(await signed("GET", "/api/me", undefined, { key: short }), /expired/);
    } finally {
      clock.advance(-(86_400_000 + 1000));
    }
    const gone = await create({ name: "gone" });
    expect((await org.admin.delete(`/api/service-credentials/${gone.id}`)).status).toBe(200);
    expectRefused(await signed("GET", "/api/me", undefined, { key: gone }), /does not verify/);
  });
});
