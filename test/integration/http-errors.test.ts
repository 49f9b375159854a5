import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

let server: TestServer;
let org: TestOrg;

beforeAll(async () => {
  server = await startServer({ env: { MAX_BODY_BYTES: "4096" } });
  org = await newOrg(server);
});
afterAll(() => server.stop());

function expectEnvelope(res: { status: number; body: any; headers: Headers }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe("string");
  expect(res.body.error.requestId).toBe(res.headers.get("x-request-id"));
  expect(JSON.stringify(res.body)).not.toMatch(/at \S+\.ts:\d+|select |insert into/i);
}

describe("error envelope", () => {
  test("unknown routes are 404", async () => {
    expectEnvelope(await org.admin.get("/api/nothing-here"), 404, "not_found");
    expectEnvelope(await server.api.get("/elsewhere"), 404, "not_found");
  });
  test("a path that exists under other methods is 405 with Allow, not 404", async () => {
    const bucket = await org.admin.post("/api/buckets", { name: "methods" });
    const patch = await org.admin.call("PATCH", `/api/buckets/${bucket.body.id}`, {});
    expectEnvelope(patch, 405, "method_not_allowed");
    expect(patch.headers.get("allow")).toBe("DELETE, GET, HEAD");
    const list = await org.admin.call("PATCH", "/api/buckets", {});
    expectEnvelope(list, 405, "method_not_allowed");
    expect(list.headers.get("allow")).toBe("GET, HEAD, POST");
    // Routes that are not tools count too: the webhook, the document.
    expect((await server.api.get("/api/payments/webhook")).headers.get("allow")).toBe("POST");
    expect((await server.api.post("/api/openapi.json")).headers.get("allow")).toBe("GET, HEAD");
    // A path no route has stays 404.
    expectEnvelope(await org.admin.call("PATCH", "/api/buckets/a/b/c", {}), 404, "not_found");
  });
  test("malformed JSON is 400", async () => {
    expectEnvelope(await org.admin.call("POST", "/api/buckets", "{not json"), 400, "bad_request");
  });
  test("a body that is not an object is 400 validation_error", async () => {
    expectEnvelope(await org.admin.call("POST", "/api/buckets", "[1,2]"), 400, "validation_error");
  });
  test("oversized bodies are 413", async () => {
    expectEnvelope(await org.admin.post("/api/buckets", { name: "x".repeat(10_000) }), 413, "payload_too_large");
  });
  test("validation errors list path and message; unknown fields are refused", async () => {
    const res = await org.admin.post("/api/buckets", { name: 5, extra: true });
    expectEnvelope(res, 400, "validation_error");
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { path: "name", message: expect.any(String) },
        { path: "", message: expect.stringContaining("extra") },
      ]),
    );
  });
  test("successful responses carry X-Request-Id too", async () => {
    const res = await org.admin.get("/api/me");
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
  test("the OpenAPI document and docs need no credential and load nothing from a CDN", async () => {
    const doc = await server.api.get("/api/openapi.json");
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe("3.0.3");
    const html = await fetch(`${server.url}/api/docs`).then((r) => r.text());
    expect(html).toContain("/api/docs/scalar.js");
    expect(html).not.toMatch(/https?:\/\//);
    const js = await fetch(`${server.url}/api/docs/scalar.js`);
    expect(js.status).toBe(200);
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  });
});
