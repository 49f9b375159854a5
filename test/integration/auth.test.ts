import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SignJWT } from "jose";
import { ManualClock } from "../../domain/core/clock.ts";
import { newOrg, signJwt, startServer, type TestOrg, type TestServer } from "../support/server.ts";

let server: TestServer;
let org: TestOrg;
const clock = new ManualClock();

beforeAll(async () => {
  server = await startServer({ clock });
  // Start-up can take longer than the 10 s by which the expired-JWT case below is expired.
  clock.set(new Date());
  org = await newOrg(server);
});
afterAll(() => server.stop());

async function expect401(token: string | null, headerValue?: string) {
  const headers: Record<string, string> = headerValue ? { authorization: headerValue } : {};
  const res = await server.api.withToken(token).get("/api/me", headers);
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe("unauthorized");
  expect(res.body.error.requestId).toBe(res.headers.get("x-request-id"));
  return res;
}

describe("credentials that are refused with 401", () => {
  test("no token", () => expect401(null));
  test("garbage token", () => expect401("garbage"));
  test("wrong scheme", () => expect401(null, `Basic ${org.adminKey.secret}`));
  test("a well-formed secret that was never issued", () => expect401("a".repeat(64)));
  test("accessKeyId as bearer", async () => {
    const me = await org.admin.get("/api/me");
    await expect401(me.body.credential.accessKeyId);
  });
  test("expired key", async () => {
    const key = await org.keyClient(["read"], { expiresInDays: 1 });
    expect((await key.get("/api/me")).status).toBe(200);
    clock.advance(86_400_000 + 1000);
    try {
      const res = await expect401(key.secret);
      expect(res.body.error.message).toMatch(/expired/i);
    } finally {
      clock.advance(-(86_400_000 + 1000));
    }
  });
  test("rotated-out secret", async () => {
    const key = await org.keyClient(["read"]);
    await org.admin.put(`/api/api-keys/${key.keyId}/rotate`);
    await expect401(key.secret);
  });
  test("deleted key", async () => {
    const key = await org.keyClient(["read"]);
    await org.admin.delete(`/api/api-keys/${key.keyId}`);
    await expect401(key.secret);
  });
  test("JWT signed with another secret, expired, with alg none, or without org_id", async () => {
    const sub = crypto.randomUUID();
    const org_id = crypto.randomUUID();
    await expect401(await signJwt({ sub, org_id }, { secret: "another-secret-of-sufficient-length" }));
    await expect401(await signJwt({ sub, org_id }, { expiresIn: Math.floor(Date.now() / 1000) - 10 }));
    const none = `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${Buffer.from(JSON.stringify({ sub, org_id, exp: Math.floor(Date.now() / 1000) + 60 })).toString("base64url")}.`;
    await expect401(none);
    const noOrg = await new SignJWT({ sub }).setProtectedHeader({ alg: "HS256" }).setExpirationTime("1h").sign(new TextEncoder().encode("test-jwt-secret-that-is-long-enough"));
    await expect401(noOrg);
    const noExp = await new SignJWT({ sub, org_id }).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode("test-jwt-secret-that-is-long-enough"));
    await expect401(noExp);
  });
  test("the bearer scheme is case-insensitive", async () => {
    const res = await server.api.get("/api/me", { authorization: `bearer ${org.adminKey.secret}` });
    expect(res.status).toBe(200);
  });
});

describe("JWT callers", () => {
  test("an unknown user and organization are provisioned; the first user owns it", async () => {
    const org_id = crypto.randomUUID();
    const first = crypto.randomUUID();
    const second = crypto.randomUUID();
    const a = await server.api.withToken(await signJwt({ sub: first, org_id, org_name: "Acme", email: "a@acme.test" })).get("/api/me");
    expect(a.status).toBe(200);
    expect(a.body.organization).toEqual({ id: org_id, name: "Acme" });
    expect(a.body.user).toEqual({ id: first, email: "a@acme.test" });
    expect(a.body.memberships[0].role).toBe("owner");
    expect(a.body.credential.scopes.sort()).toEqual(["admin", "delete", "read", "write"]);
    const b = await server.api.withToken(await signJwt({ sub: second, org_id })).get("/api/me");
    expect(b.body.memberships).toEqual([{ organizationId: org_id, organizationName: "Acme", role: "member" }]);
  });

  test("a token verified once (and remembered) is refused once the clock passes its expiry", async () => {
    const exp = Math.floor(clock.now().getTime() / 1000) + 120;
    const token = await signJwt({ sub: crypto.randomUUID(), org_id: crypto.randomUUID() }, { expiresIn: exp });
    for (let i = 0; i < 3; i++) expect((await server.api.withToken(token).get("/api/me")).status).toBe(200);
    clock.advance(121_000);
    try {
      const refused = await expect401(token);
      expect(refused.body.error.message).toBe("JWT has expired");
    } finally {
      clock.set(new Date());
    }
  });

  test("a token another server's secret verified is refused by a server with a different secret", async () => {
    const other = await startServer({ env: { JWT_SECRET: "another-secret-of-sufficient-length" } });
    try {
      const token = await signJwt({ sub: crypto.randomUUID(), org_id: crypto.randomUUID() }, { secret: "another-secret-of-sufficient-length" });
      expect((await other.api.withToken(token).get("/api/me")).status).toBe(200);
      await expect401(token);
    } finally {
      await other.stop();
    }
  });

  test("JWTs are refused when JWT_SECRET is not configured", async () => {
    const plain = await startServer({ env: { JWT_SECRET: "" } });
    try {
      const res = await plain.api.withToken(await signJwt({ sub: crypto.randomUUID(), org_id: crypto.randomUUID() })).get("/api/me");
      expect(res.status).toBe(401);
    } finally {
      await plain.stop();
    }
  });
});

describe("scopes", () => {
  // docs/conventions.md: GET read, POST/PUT write, DELETE delete, key management admin, /me any.
  const cases = [
    { scope: "read", get: 200, post: 403, del: 403, keys: 403 },
    { scope: "write", get: 403, post: 201, del: 403, keys: 403 },
    { scope: "delete", get: 403, post: 403, del: 200, keys: 403 },
    { scope: "admin", get: 200, post: 201, del: 200, keys: 200 },
  ] as const;
  for (const c of cases) {
    test(`a '${c.scope}' key`, async () => {
      const key = await org.keyClient([c.scope]);
      const target = (await org.admin.post("/api/buckets", { name: `s-${c.scope}` })).body;
      expect((await key.get("/api/me")).status).toBe(200);
      const list = await key.get("/api/buckets");
      expect(list.status).toBe(c.get);
      const create = await key.post("/api/buckets", { name: `made-by-${c.scope}` });
      expect(create.status).toBe(c.post);
      if (c.post === 403) expect(create.body.error).toMatchObject({ code: "forbidden" });
      const del = await key.delete(`/api/buckets/${target.id}`);
      expect(del.status).toBe(c.del);
      // refusal changed nothing
      if (c.del === 403) expect((await org.admin.get(`/api/buckets/${target.id}`)).status).toBe(200);
      expect((await key.get("/api/api-keys")).status).toBe(c.keys);
      expect((await key.post("/api/api-keys", { name: "k" })).status).toBe(c.keys === 200 ? 201 : 403);
    });
  }
  test("scope is checked before input: a read key posting garbage gets 403", async () => {
    const key = await org.keyClient(["read"]);
    expect((await key.post("/api/buckets", { nonsense: true })).status).toBe(403);
  });
});
