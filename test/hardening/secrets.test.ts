import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { loadConfig } from "../../app/config.ts";
import { rowsOf } from "../../db/client.ts";
import type { Logger } from "../../domain/ports/log.ts";
import { sameHash } from "../../domain/access/secrets.ts";
import { deliver, stripeEvent, subscriptionObject, WEBHOOK_SECRET } from "../support/billing.ts";
import { JWT_SECRET } from "../support/env.ts";
import { newOrg, signJwt, startServer, type TestOrg, type TestServer } from "../support/server.ts";

/**
 * Secrets: key secrets are stored hashed and compared in constant time; no secret
 * (API key, JWT signing secret, webhook secret, provider key) ever reaches a log line or an
 * answer other than the one that hands a new key out. Plus the headers every answer carries
 * and the API's CORS policy.
 */

const STRIPE_KEY = "sk_test_secret_that_must_never_be_logged_0123456789";

function recordingLogger(): { log: Logger; text: () => string } {
  const lines: string[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
  return { log: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") }, text: () => lines.join("\n") };
}

describe("secrets", () => {
  let server: TestServer;
  let org: TestOrg;
  const recorder = recordingLogger();
  /** Every answer body and header seen, except the ones that hand out a new secret. */
  const seen: string[] = [];
  const keep = <T extends { body: unknown; headers: Headers }>(res: T): T => {
    seen.push(typeof res.body === "string" ? res.body : JSON.stringify(res.body));
    seen.push(JSON.stringify([...res.headers]));
    return res;
  };

  beforeAll(async () => {
    server = await startServer({
      log: recorder.log,
      env: { LOG_LEVEL: "debug", STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_SECRET_KEY: STRIPE_KEY, STRIPE_API_URL: "http://127.0.0.1:1" },
    });
    org = await newOrg(server);
  });
  afterAll(() => server.stop());

  test("a key's secret is stored only as its SHA-256; lists and lookups never show it", async () => {
    const key = await org.keyClient(["read"]);
    const rows = rowsOf<Record<string, unknown>>(await server.services.deps.db.execute(sql`select * from api_keys where id = ${key.keyId}`));
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows[0]);
    expect(stored).not.toContain(key.secret);
    expect(rows[0]!.secret_hash).toBe(createHash("sha256").update(key.secret).digest("hex"));

    const list = keep(await org.admin.get("/api/api-keys?limit=200"));
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(key.secret);
    expect(list.body.data.every((k: Record<string, unknown>) => !("secret" in k))).toBe(true);
  });

  test("a rotated key's old secret stops working and its new one is not stored either", async () => {
    const key = await org.keyClient(["read"]);
    const rotated = await org.admin.put(`/api/api-keys/${key.keyId}/rotate`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(key.secret);
    expect(keep(await key.get("/api/me")).status).toBe(401);
    expect((await server.api.withToken(fresh).get("/api/me")).status).toBe(200);
    const rows = rowsOf<Record<string, unknown>>(await server.services.deps.db.execute(sql`select * from api_keys where id = ${key.keyId}`));
    expect(JSON.stringify(rows)).not.toContain(fresh);
  });

  test("hash comparison is exact: equal only for the same digest, never for a prefix or another length", () => {
    const h = createHash("sha256").update("x").digest("hex");
    expect(sameHash(h, h)).toBe(true);
    expect(sameHash(h, `${h.slice(0, -1)}${h.endsWith("0") ? "1" : "0"}`)).toBe(false);
    expect(sameHash(h, h.slice(0, 32))).toBe(false);
    expect(sameHash(h, "")).toBe(false);
  });

  test("refused credentials say why without repeating what was sent", async () => {
    const wrongKey = "ab".repeat(32);
    const forged = await signJwt({ sub: crypto.randomUUID(), org_id: org.orgId }, { secret: "another-secret-of-enough-length" });
    for (const token of [wrongKey, forged, "not-a-token", `${org.adminKey.secret}x`]) {
      const res = keep(await server.api.withToken(token).get("/api/me"));
      expect(res.status).toBe(401);
      expect(JSON.stringify(res.body)).not.toContain(token);
    }
  });

  test("the payment webhook never echoes its secret or the signature it checked", async () => {
    const event = stripeEvent("customer.subscription.created", subscriptionObject({ customer: "cus_x", orgId: org.orgId, price: "price_none" }));
    const bad = keep(await deliver(server.url, event, { secret: "whsec_wrong" }));
    expect(bad.status).toBe(400);
    const missing = keep(await deliver(server.url, event, { signature: null }));
    expect(missing.status).toBe(400);
  });

  test("the provider key, the JWT secret and the webhook secret appear in no answer; no secret appears in the log", async () => {
    // Make every kind of call once more so the log has seen success, refusal and failure.
    keep(await org.admin.get("/api/me"));
    keep(await org.admin.post("/api/billing/checkout", { plan: "pro" }));
    keep(await org.owner.get("/api/billing/subscription"));
    keep(await org.admin.get("/api/openapi.json"));
    const answers = seen.join("\n");
    for (const secret of [STRIPE_KEY, JWT_SECRET, WEBHOOK_SECRET]) expect(answers).not.toContain(secret);

    const log = recorder.text();
    expect(log.length).toBeGreaterThan(0);
    for (const secret of [STRIPE_KEY, JWT_SECRET, WEBHOOK_SECRET, org.adminKey.secret, org.jwt]) expect(log).not.toContain(secret);
  });
});

describe("security headers", () => {
  let server: TestServer;
  let org: TestOrg;
  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server);
  });
  afterAll(() => server.stop());

  const expectHardened = (headers: Headers) => {
    expect(headers.get("x-content-type-options")).toBe("nosniff");
    expect(headers.get("x-frame-options")).toBe("DENY");
    expect(headers.get("referrer-policy")).toBe("no-referrer");
    expect(headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  };

  test("on successes, refusals, unknown routes, MCP and health checks alike", async () => {
    const answers = [
      await org.admin.get("/api/me"),
      await server.api.get("/api/me"),
      await org.admin.get("/api/no-such-route"),
      await server.api.get("/api/openapi.json"),
      await org.admin.call("POST", "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/list" }, { accept: "application/json, text/event-stream" }),
      await server.api.get("/healthz"),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 401, 404, 200, 200, 200]);
    for (const a of answers) expectHardened(a.headers);
  });

  test("API answers are never stored by caches: they hold presigned URLs and new secrets", async () => {
    const created = await org.admin.post("/api/api-keys", { name: "cached?", scopes: ["read"] });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect((await org.admin.get("/api/me")).headers.get("cache-control")).toBe("no-store");
  });

  test("HSTS is sent only when the public address is https", async () => {
    expect((await server.api.get("/healthz")).headers.get("strict-transport-security")).toBeNull();
    const tls = await startServer({ env: { PUBLIC_URL: "https://media.example.com" } });
    try {
      expect((await tls.api.get("/healthz")).headers.get("strict-transport-security")).toContain("max-age=");
    } finally {
      await tls.stop();
    }
  });

  test("the docs page allows its own inline script by hash, not 'unsafe-inline'", async () => {
    const res = await fetch(`${server.url}/api/docs`);
    const html = await res.text();
    const csp = res.headers.get("content-security-policy")!;
    const inline = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const hash = `sha256-${createHash("sha256").update(inline).digest("base64")}`;
    expect(csp).toContain(`script-src 'self' '${hash}'`);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expectHardened(res.headers);
    const bundle = await fetch(`${server.url}/api/docs/scalar.js`);
    await bundle.arrayBuffer();
    expect(bundle.headers.get("cache-control")).toContain("max-age");
  });
});

describe("CORS", () => {
  const APP = "https://app.example.com";
  const preflight = (url: string, origin: string, path = "/api/media") =>
    fetch(`${url}${path}`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, idempotency-key" },
    });

  test("off unless CORS_ORIGINS is set: preflights are refused with the envelope, answers carry no allow header", async () => {
    const server = await startServer();
    try {
      const org = await newOrg(server);
      const res = await preflight(server.url, APP);
      expect(res.status).toBe(403);
      expect((await res.json()).error.code).toBe("forbidden");
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      const get = await org.admin.get("/api/me", { origin: APP });
      expect(get.status).toBe(200);
      expect(get.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await server.stop();
    }
  });

  test("listed origins get preflights and readable answers; others do not", async () => {
    const server = await startServer({ env: { CORS_ORIGINS: `${APP}, https://admin.example.com` } });
    try {
      const org = await newOrg(server);
      const ok = await preflight(server.url, APP);
      expect(ok.status).toBe(204);
      expect(ok.headers.get("access-control-allow-origin")).toBe(APP);
      expect(ok.headers.get("access-control-allow-methods")).toContain("DELETE");
      expect(ok.headers.get("access-control-allow-headers")).toContain("idempotency-key");
      // A browser host that cannot edit the MCP URL picks tools with these (docs/mcp.md).
      expect(ok.headers.get("access-control-allow-headers")).toContain("x-mcp-toolsets, x-mcp-readonly");
      expect(ok.headers.get("access-control-allow-credentials")).toBeNull();
      expect(ok.headers.get("vary")).toContain("origin");
      expect((await preflight(server.url, APP, "/mcp")).status).toBe(204);

      const get = await org.admin.get("/api/me", { origin: APP });
      expect(get.status).toBe(200);
      expect(get.headers.get("access-control-allow-origin")).toBe(APP);
      expect(get.headers.get("access-control-expose-headers")).toContain("x-request-id");
      // Errors are readable too, or a browser client could not show why it was refused.
      const refused = await server.api.get("/api/me", { origin: APP });
      expect(refused.status).toBe(401);
      expect(refused.headers.get("access-control-allow-origin")).toBe(APP);

      const evil = await preflight(server.url, "https://evil.example.net");
      expect(evil.status).toBe(403);
      expect(evil.headers.get("access-control-allow-origin")).toBeNull();
      const evilGet = await org.admin.get("/api/me", { origin: "https://evil.example.net" });
      expect(evilGet.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await server.stop();
    }
  });

  test("`*` allows any origin without credentials", async () => {
    const server = await startServer({ env: { CORS_ORIGINS: "*" } });
    try {
      const res = await preflight(server.url, "https://anywhere.example.org");
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
    } finally {
      await server.stop();
    }
  });

  test("CORS_ORIGINS must list origins: a path or a bare host refuses to start with a clear message", () => {
    expect(() => loadConfig({ CORS_ORIGINS: "https://app.example.com/path" })).toThrow(/CORS_ORIGINS/);
    expect(() => loadConfig({ CORS_ORIGINS: "app.example.com" })).toThrow(/must be an origin/);
    expect(loadConfig({ CORS_ORIGINS: "https://App.Example.com:443/, http://localhost:5173" }).corsOrigins).toEqual([
      "https://app.example.com",
      "http://localhost:5173",
    ]);
  });
});
