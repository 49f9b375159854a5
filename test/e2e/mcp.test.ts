import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer } from "../../mcp/server.ts";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { registry } from "../../tools/registry.ts";
import { toolsetOf } from "../../tools/toolsets.ts";
import { mcpClient, withServerAndOrg } from "../support/fixtures.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { resultJson, textBlocks, toolError } from "../support/mcp-results.ts";

let server: TestServer;
let org: TestOrg;

withServerAndOrg({ ready: (made) => void ({ server, org } = made) });

const connect = (secret: string | null, query = "") => mcpClient(server, secret, "e2e", query);

function errorOf(result: { content: unknown; isError?: boolean }) {
  expect(result.isError).toBe(true);
  return toolError(result.content);
}

describe("MCP over Streamable HTTP", () => {
  test("initialize reports the server and its instructions", async () => {
    const client = await connect(org.adminKey.secret);
    expect(client.getServerVersion()?.name).toBe("media-storage");
    expect(client.getInstructions()).toContain("presign_upload");
    await client.close();
  });

  test("tools/list is filtered by the key's scopes", async () => {
    const read = await org.keyClient(["read"]);
    const client = await connect(read.secret, "?toolsets=all");
    const { tools } = await client.listTools();
    const expected = registry.filter((t) => t.scope === "read" || t.scope === "any").map((t) => t.name).sort();
    expect(tools.map((t) => t.name).sort()).toEqual(expected);
    expect(tools.some((t) => t.name === "buckets_create")).toBe(false);
    await client.close();
  });

  test("toolsets: everything by default, the default set, named sets, all, and read-only mode", async () => {
    const names = async (query: string) => {
      const client = await connect(org.adminKey.secret, query);
      const { tools } = await client.listTools();
      await client.close();
      return tools.map((t) => t.name);
    };
    expect(await names("")).toEqual(registry.map((t) => t.name));
    const named = await names("?toolsets=default");
    expect(named).toContain("media_get");
    expect(named).toContain("presign_upload");
    expect(named).not.toContain("webhooks_create");
    expect(named).not.toContain("billing_subscription_get");
    const mediaAndSearch = await names("?toolsets=media,search");
    expect(mediaAndSearch.filter((n) => !["media", "search"].includes(toolsetOf({ name: n })!))).toEqual([]);
    for (const n of ["media_get", "objects_move", "search", "media_similar"]) expect(mediaAndSearch).toContain(n);
    expect((await names("?toolsets=all")).length).toBe(registry.length);
    expect(await names("?toolsets=webhooks&readonly=true")).toEqual(["webhooks_list", "webhooks_get", "webhooks_deliveries_list"]);

    // Read-only is kept on calls too; a set only saves context, so a permitted tool outside it still runs.
    const readOnly = await connect(org.adminKey.secret, "?toolsets=buckets&readonly=true");
    expect(errorOf((await readOnly.callTool({ name: "buckets_create", arguments: { name: "ro" } })) as never).code).toBe("forbidden");
    expect((await readOnly.callTool({ name: "me_get", arguments: {} })).isError).toBeFalsy();
    await readOnly.close();

    const unknown = await fetch(`${server.url}/mcp?toolsets=media,nonsense`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.adminKey.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error.message).toContain("Unknown toolset nonsense");
  });

  test("a call returns structuredContent matching the outputSchema", async () => {
    const client = await connect(org.adminKey.secret);
    const created = await client.callTool({ name: "buckets_create", arguments: { name: "from-mcp" } });
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent).toMatchObject({ name: "from-mcp" });
    const listed = await client.callTool({ name: "buckets_list", arguments: {} });
    expect((listed.structuredContent as { data: { name: string }[] }).data.map((b) => b.name)).toContain("from-mcp");
    // The text: a summary line first, then the whole answer as JSON for clients that read only text.
    const bucket = created.structuredContent as { id: string };
    expect(textBlocks(created.content)).toEqual([`Bucket "from-mcp"; id ${bucket.id}`, JSON.stringify(created.structuredContent)]);
    const total = (listed.structuredContent as { total: number }).total;
    expect(textBlocks(listed.content)[0]).toMatch(new RegExp(`^\\d+ buckets? \\(of ${total}\\)(: .*from-mcp.*)?`));
    expect(resultJson(listed.content)).toEqual(listed.structuredContent);
    // and REST sees the same state
    const rest = await org.admin.get("/api/buckets");
    expect(rest.body.data.map((b: { name: string }) => b.name)).toContain("from-mcp");
    await client.close();
  });

  test("invalid input is an isError result with validation_error details", async () => {
    const client = await connect(org.adminKey.secret);
    const result = await client.callTool({ name: "buckets_create", arguments: { name: "bad name!" } });
    const err = errorOf(result as never);
    expect(err.code).toBe("validation_error");
    expect(err.details).toEqual([{ path: "name", message: expect.any(String) }]);
    await client.close();
  });

  test("domain errors carry the envelope's code and message", async () => {
    const client = await connect(org.adminKey.secret);
    const result = await client.callTool({ name: "buckets_get", arguments: { id: crypto.randomUUID() } });
    expect(errorOf(result as never)).toMatchObject({ code: "not_found", message: "Bucket not found" });
    expect(textBlocks(result.content)[0]).toBe("Error not_found: Bucket not found");
    await client.close();
  });

  test("a tool outside the key's scopes is refused", async () => {
    const read = await org.keyClient(["read"]);
    const client = await connect(read.secret);
    const result = await client.callTool({ name: "buckets_create", arguments: { name: "nope" } });
    expect(errorOf(result as never).code).toBe("forbidden");
    await client.close();
  });

  test("no token or a bad token is 401 before the MCP layer", async () => {
    for (const auth of [undefined, "Bearer nonsense"]) {
      const res = await fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(auth ? { authorization: auth } : {}) },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe("unauthorized");
    }
    await expect(connect(null)).rejects.toThrow();
  });

  test("a 401 says 'Bearer' and points at the protected-resource metadata (RFC 6750, RFC 9728)", async () => {
    const post = (auth?: string) =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(auth ? { authorization: auth } : {}) },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    const metadataUrl = `${server.url}/.well-known/oauth-protected-resource/mcp`;
    const none = await post();
    expect(none.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    const bad = await post(`Bearer ${"0".repeat(64)}`);
    expect(bad.headers.get("www-authenticate")).toBe(`Bearer error="invalid_token", resource_metadata="${metadataUrl}", error_description="Invalid API key"`);
    // REST routes say the same, pointing at the API's own metadata.
    const rest = await fetch(`${server.url}/api/buckets`, { headers: { authorization: "Bearer nonsense" } });
    expect(rest.headers.get("www-authenticate")).toStartWith(`Bearer error="invalid_token", resource_metadata="${server.url}/.well-known/oauth-protected-resource"`);

    const metadata = await fetch(metadataUrl);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toEqual({
      resource: `${server.url}/mcp`,
      resource_name: "Media storage",
      authorization_servers: [server.url],
      bearer_methods_supported: ["header"],
      scopes_supported: ["read", "write", "delete", "admin"],
      resource_documentation: `${server.url}/api/docs`,
    });
    expect((await (await fetch(`${server.url}/.well-known/oauth-protected-resource`)).json()).resource).toBe(server.url);

    // The authorization server it names is this service (test/e2e/oauth.test.ts follows the flow).
    const registration = await fetch(`${server.url}/register`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(registration.status).toBe(400);
    expect((await registration.json()).error).toBe("invalid_client_metadata");
  });

  test("the SDK client with a refused key reports the service's refusal, not an OAuth problem", async () => {
    const error = await connect("0".repeat(64)).then(
      () => null,
      (err: Error) => err,
    );
    expect(error?.message).toContain("Invalid API key");
  });

  test("DNS rebinding: Host and Origin must name this server", async () => {
    const port = new URL(server.url).port;
    const init = (host: string, origin: string | null) => ({
      method: "POST",
      headers: {
        host,
        ...(origin ? { origin } : {}),
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${org.adminKey.secret}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    const evil = await fetch(`${server.url}/mcp`, init("evil.example.com", "http://evil.example.com"));
    expect(evil.status).toBe(403);
    expect((await evil.json()).error.message).toContain("evil.example.com");
    const evilOrigin = await fetch(`${server.url}/mcp`, init(`localhost:${port}`, "http://evil.example.com"));
    expect(evilOrigin.status).toBe(403);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      const ok = await fetch(`${server.url}/mcp`, init(host, `http://${host}`));
      expect(ok.status).toBe(200);
    }
  });

  test("GET /mcp is 405: the server is stateless", async () => {
    const res = await fetch(`${server.url}/mcp`, { headers: { authorization: `Bearer ${org.adminKey.secret}`, accept: "text/event-stream" } });
    expect(res.status).toBe(405);
  });

  test("a caller with no permitted tools gets an empty list, not 'method not found'", async () => {
    const me = await org.admin.get("/api/me");
    const caller = { orgId: org.orgId, userId: me.body.user.id, apiKeyId: null, scopes: new Set<never>(), bucketId: null, principal: "test" };
    const mcp = createMcpServer(server.services.deps, caller, () => "r", []);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await mcp.connect(a);
    const client = new Client({ name: "empty", version: "1" });
    await client.connect(b);
    const listed = await client.request({ method: "tools/list" }, ListToolsResultSchema);
    expect(listed.tools).toEqual([]);
    await client.close();
  });
});
