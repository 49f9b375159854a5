import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCli } from "../support/cli.ts";
import { mcpClient } from "../support/fixtures.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

let server: TestServer;
let org: TestOrg;
let other: TestOrg;

beforeAll(async () => {
  server = await startServer();
  org = await newOrg(server);
  other = await newOrg(server, "Other org");
});
afterAll(() => server.stop());

const DAY = 86_400_000;

describe("POST /api/api-keys", () => {
  test("defaults: read scope, 90 days, secret once, accessKeyId with prefix", async () => {
    const before = Date.now();
    const res = await org.admin.post("/api/api-keys", { name: "reader" });
    expect(res.status).toBe(201);
    const k = res.body;
    expect(k.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(k.name).toBe("reader");
    expect(k.scopes).toEqual(["read"]);
    expect(k.bucketId).toBeNull();
    expect(k.accessKeyId).toMatch(/^MSK[A-Z2-7]{17}$/);
    expect(k.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof k.note).toBe("string");
    const expires = Date.parse(k.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 90 * DAY - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 90 * DAY + 1000);
    // the secret is the bearer value
    const me = await server.api.withToken(k.secret).get("/api/me");
    expect(me.status).toBe(200);
    expect(me.body.credential).toMatchObject({ type: "api_key", apiKeyId: k.id, accessKeyId: k.accessKeyId, scopes: ["read"] });
  });

  test("expiresInDays bounds: 1 and 365 accepted; 0, 366 and fractions refused", async () => {
    // A dashboard user: an API key cannot create a key that outlives it (attack-run-a.test.ts).
    for (const days of [1, 365]) {
      const res = await org.owner.post("/api/api-keys", { name: `d${days}`, expiresInDays: days });
      expect(res.status).toBe(201);
      expect(Math.round((Date.parse(res.body.expiresAt) - Date.now()) / DAY)).toBe(days);
    }
    for (const days of [0, 366, 1.5, -3, "7"]) {
      const res = await org.admin.post("/api/api-keys", { name: "bad", expiresInDays: days });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.details[0].path).toBe("expiresInDays");
    }
  });

  test("expiresInDays 365 from an API key is accepted and capped at the key's own expiry, said in the note: REST, MCP and CLI", async () => {
    // The bootstrap-key case: a key made earlier asks for the longest life the API allows.
    const creator = await org.keyClient(["admin"], { expiresInDays: 365 });
    const creatorExpiry = (await creator.get("/api/me")).body.credential.expiresAt as string;
    const rest = await creator.post("/api/api-keys", { name: "year", expiresInDays: 365 });
    expect(rest.status).toBe(201);
    expect(rest.body.expiresAt).toBe(creatorExpiry);
    expect(rest.body.note).toContain(`capped at ${creatorExpiry}`);

    const mcp = await mcpClient(server, creator.secret, "caps", "?toolsets=keys");
    try {
      const res = (await mcp.callTool({ name: "api_keys_create", arguments: { name: "year-mcp", expiresInDays: 365 } })) as { isError?: boolean; structuredContent?: { expiresAt: string; note: string } };
      expect(res.isError).toBeFalsy();
      expect(res.structuredContent!.expiresAt).toBe(creatorExpiry);
      expect(res.structuredContent!.note).toContain("capped at");
    } finally {
      await mcp.close();
    }

    const cli = await runCli(["api-keys", "create", "--name", "year-cli", "--expires-in-days", "365"], { url: server.url, key: creator.secret });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(`capped at ${creatorExpiry}`);
  }, 60_000);

  test("scopes are validated; admin implies every scope", async () => {
    expect((await org.admin.post("/api/api-keys", { name: "x", scopes: ["root"] })).status).toBe(400);
    expect((await org.admin.post("/api/api-keys", { name: "x", scopes: [] })).status).toBe(400);
    expect((await org.admin.post("/api/api-keys", { name: "" })).status).toBe(400);
    expect((await org.admin.post("/api/api-keys", {})).status).toBe(400);
    const res = await org.admin.post("/api/api-keys", { name: "rw", scopes: ["read", "write", "delete"] });
    expect(res.status).toBe(201);
    expect(res.body.scopes).toEqual(["read", "write", "delete"]);
    const admin = await org.admin.post("/api/api-keys", { name: "a", scopes: ["admin"] });
    const me = await server.api.withToken(admin.body.secret).get("/api/me");
    expect(me.body.credential.scopes.sort()).toEqual(["admin", "delete", "read", "write"]);
  });

  test("bucketId must be a bucket of the caller's organization", async () => {
    const mine = (await org.admin.post("/api/buckets", { name: "keyed" })).body;
    const theirs = (await other.admin.post("/api/buckets", { name: "keyed" })).body;
    const ok = await org.admin.post("/api/api-keys", { name: "b", bucketId: mine.id });
    expect(ok.status).toBe(201);
    expect(ok.body.bucketId).toBe(mine.id);
    const foreign = await org.admin.post("/api/api-keys", { name: "b", bucketId: theirs.id });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("not_found");
    expect((await org.admin.post("/api/api-keys", { name: "b", bucketId: "not-a-uuid" })).status).toBe(400);
  });

  test("a bucket-restricted key cannot create a key that reaches further", async () => {
    const b1 = (await org.admin.post("/api/buckets", { name: "r1" })).body;
    const b2 = (await org.admin.post("/api/buckets", { name: "r2" })).body;
    const restricted = await org.keyClient(["admin"], { bucketId: b1.id });
    expect((await restricted.post("/api/api-keys", { name: "wide" })).status).toBe(403);
    expect((await restricted.post("/api/api-keys", { name: "other", bucketId: b2.id })).status).toBe(403);
    const same = await restricted.post("/api/api-keys", { name: "same", bucketId: b1.id, scopes: ["read"] });
    expect(same.status).toBe(201);
  });
});

describe("GET /api/api-keys", () => {
  test("lists the organization's keys without secrets, paginated", async () => {
    const res = await org.admin.get("/api/api-keys?limit=2");
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.total).toBeGreaterThan(2);
    expect(res.body.hasMore).toBe(true);
    for (const k of res.body.data) {
      expect(k.secret).toBeUndefined();
      expect(k.secretHash).toBeUndefined();
      expect(k.accessKeyId).toMatch(/^MSK/);
    }
    const all = await org.admin.get("/api/api-keys?limit=200");
    expect(all.body.data.length).toBe(all.body.total);
    expect(all.body.hasMore).toBe(false);
    // another organization's list never includes ours
    const theirs = await other.admin.get("/api/api-keys?limit=200");
    const ids = new Set(all.body.data.map((k: { id: string }) => k.id));
    expect(theirs.body.data.some((k: { id: string }) => ids.has(k.id))).toBe(false);
  });
});

describe("PUT /api/api-keys/{id}/rotate", () => {
  test("issues a new secret and invalidates the old one", async () => {
    const created = (await org.admin.post("/api/api-keys", { name: "rot", scopes: ["write"] })).body;
    const res = await org.admin.put(`/api/api-keys/${created.id}/rotate`);
    expect(res.status).toBe(200);
    expect(res.body.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.secret).not.toBe(created.secret);
    expect(res.body).toMatchObject({ id: created.id, accessKeyId: created.accessKeyId, scopes: ["write"], expiresAt: created.expiresAt });
    expect(res.body.rotatedAt).not.toBeNull();
    expect((await server.api.withToken(created.secret).get("/api/me")).status).toBe(401);
    expect((await server.api.withToken(res.body.secret).get("/api/me")).status).toBe(200);
  });

  test("another organization's key is not found", async () => {
    const theirs = (await other.admin.post("/api/api-keys", { name: "t" })).body;
    expect((await org.admin.put(`/api/api-keys/${theirs.id}/rotate`)).status).toBe(404);
    expect((await server.api.withToken(theirs.secret).get("/api/me")).status).toBe(200);
  });
});

describe("DELETE /api/api-keys/{id}", () => {
  test("deletes; the secret stops working; a second delete is 404", async () => {
    const created = (await org.admin.post("/api/api-keys", { name: "del" })).body;
    const res = await org.admin.delete(`/api/api-keys/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: created.id, deleted: true });
    expect((await server.api.withToken(created.secret).get("/api/me")).status).toBe(401);
    expect((await org.admin.delete(`/api/api-keys/${created.id}`)).status).toBe(404);
  });

  test("another organization's key is not found and survives", async () => {
    const theirs = (await other.admin.post("/api/api-keys", { name: "t" })).body;
    const res = await org.admin.delete(`/api/api-keys/${theirs.id}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    expect((await server.api.withToken(theirs.secret).get("/api/me")).status).toBe(200);
  });
});

describe("GET /api/me", () => {
  test("user, organization, memberships and credential", async () => {
    const res = await org.owner.get("/api/me");
    expect(res.status).toBe(200);
    expect(res.body.user.id).toBe(org.userId);
    expect(res.body.organization).toEqual({ id: org.orgId, name: "Test org" });
    expect(res.body.memberships).toEqual([{ organizationId: org.orgId, organizationName: "Test org", role: "owner" }]);
    expect(res.body.credential).toMatchObject({ type: "jwt", apiKeyId: null, bucketId: null, expiresAt: null });
  });
});
