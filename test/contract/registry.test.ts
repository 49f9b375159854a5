import { describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { errorCatalogue } from "../../domain/core/errors.ts";
import { EVENT_TYPES } from "../../contract/events.ts";
import { createApp } from "../../http/server.ts";
import { registry } from "../../tools/registry.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import type { TestOrg, TestServer } from "../support/server.ts";

// One pass: the surfaces derived from the registry are the same whatever the backends.

let server: TestServer;
let org: TestOrg;

withServerAndOrg({ ready: (made) => void ({ server, org } = made) });

const names = () => registry.map((t) => t.name).sort();

describe("one registry, four surfaces", () => {
  test("tool names are unique snake_case", () => {
    expect(new Set(names()).size).toBe(registry.length);
    for (const n of names()) expect(n).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)+$|^[a-z]+$/);
  });

  test("OpenAPI operations are exactly the registry tools, at their routes", async () => {
    const doc = (await server.api.get("/api/openapi.json")).body;
    const ops: string[] = [];
    for (const [path, methods] of Object.entries<Record<string, { operationId: string }>>(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        // The routes that are not tools (the payment webhook, signed renders) are documented too.
        if (op.operationId === "payments_webhook" || op.operationId === "media_render_signed") continue;
        ops.push(op.operationId);
        const tool = registry.find((t) => t.name === op.operationId)!;
        expect(`${tool.http.method} /api${tool.http.path}`).toBe(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(ops.sort()).toEqual(names());
  });

  test("REST routes are exactly the registry tools", () => {
    const app = createApp({ deps: server.services.deps });
    // "/api/*" answers unknown API paths (404, counted by the rate limit).
    // "/" and "/console..." serve the web console; "/api/render/:id" serves signed render URLs and
    // "/api/thumbnails/:id" signed thumbnail paths, which carry their permission instead of a credential. The RFC 9728 metadata is public too.
    const infra = new Set(["/mcp", "/api/openapi.json", "/api/docs", "/api/docs/scalar.js", "/healthz", "/api/payments/webhook", "/api/*", "/", "/console", "/console/*", "/api/render/:id", "/api/thumbnails/:id", "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/register", "/.well-known/oauth-authorization-server", "/authorize", "/authorize/request", "/authorize/decision", "/token", "/revoke"]);
    const routes = app.routes.filter((r) => !infra.has(r.path)).map((r) => `${r.method} ${r.path}`).sort();
    const expected = registry.map((t) => `${t.http.method} /api${t.http.path.replace(/\{(\w+)\}/g, ":$1")}`).sort();
    expect(routes).toEqual(expected);
  });

  test("MCP tools/list for an admin key asking for every toolset is exactly the registry, with schemas and annotations", async () => {
    const client = await mcpClient(server, org.adminKey.secret, "contract", "?toolsets=all");
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.map((t) => t.name).sort()).toEqual(names());
    for (const t of tools) {
      expect(t.inputSchema.type).toBe("object");
      expect(t.outputSchema?.type).toBe("object");
      expect(typeof t.annotations?.readOnlyHint).toBe("boolean");
      expect(typeof t.annotations?.destructiveHint).toBe("boolean");
      expect(typeof t.annotations?.idempotentHint).toBe("boolean");
      expect(t.description!.length).toBeGreaterThan(20);
    }
  });

  test("the OpenAPI document is valid OpenAPI 3.0", async () => {
    const doc = (await server.api.get("/api/openapi.json")).body;
    expect(doc.openapi).toBe("3.0.3");
    await SwaggerParser.validate(structuredClone(doc));
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    for (const methods of Object.values<Record<string, any>>(doc.paths)) {
      for (const op of Object.values(methods)) {
        if (op.operationId === "payments_webhook" || op.operationId === "media_render_signed") continue;
        expect(op.responses["401"]).toBeDefined();
        expect(op.responses["400"]).toBeDefined();
      }
    }
  });

  test("the events webhooks send are documented: each type's body and signature headers (x-webhooks)", async () => {
    const doc = (await server.api.get("/api/openapi.json")).body;
    expect(Object.keys(doc["x-webhooks"]).sort()).toEqual([...EVENT_TYPES].sort());
    for (const [type, item] of Object.entries<any>(doc["x-webhooks"])) {
      const ref: string = item.post.requestBody.content["application/json"].schema.$ref;
      const schema = doc.components.schemas[ref.replace("#/components/schemas/", "")];
      expect({ type, fields: Object.keys(schema.properties), event: schema.properties.type.enum }).toEqual({ type, fields: ["type", "timestamp", "data"], event: [type] });
      expect(item.post.parameters.map((p: { name: string }) => p.name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    }
  });

  test("every declared error code exists; scopes follow the convention", () => {
    // Exceptions to "GET read, POST/PUT write, DELETE delete" are deliberate and listed.
    // Media settings are the organization's privacy choices: only admins change them. A bulk
    // delete is a POST only because its ids do not fit a query string.
    const exceptions: Record<string, string> = { me_get: "any", presign_download: "read", reconcile_run: "admin", media_settings_update: "admin", objects_bulk_delete: "delete" };
    for (const tool of registry) {
      for (const code of tool.errors) expect(errorCatalogue[code]).toBeDefined();
      const byMethod = { GET: "read", POST: "write", PUT: "write", DELETE: "delete", PATCH: "write" }[tool.http.method];
      const expected = exceptions[tool.name] ?? (["api_keys_", "service_credentials_", "oauth_", "billing_", "webhooks_", "audit_"].some((p) => tool.name.startsWith(p)) ? "admin" : byMethod);
      expect(`${tool.name}:${tool.scope}`).toBe(`${tool.name}:${expected}`);
    }
  });
});
