import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { registry } from "../../tools/registry.ts";
import { withServerAndOrg } from "../support/fixtures.ts";
import { toolError } from "../support/mcp-results.ts";
import type { TestOrg, TestServer } from "../support/server.ts";

// One pass: which tools a selection leaves follows from the request, not from the backends.

/**
 * Read-only fails closed: only an explicit false leaves the write tools in. The choice can
 * travel as headers (X-MCP-Toolsets, X-MCP-Readonly) for hosts that cannot edit the URL, and
 * adds up with the query's. Over real HTTP with the SDK's client.
 */
let server: TestServer;
let org: TestOrg;

withServerAndOrg({ ready: (made) => void ({ server, org } = made) });

const names = (tools: readonly { name: string }[]) => tools.map((t) => t.name);
const readOnly = names(registry.filter((t) => t.annotations.readOnlyHint));
const all = names(registry);

async function connect(query: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "selection", version: "1" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp${query}`), { requestInit: { headers: { authorization: `Bearer ${org.adminKey.secret}`, ...headers } } });
  await client.connect(transport);
  return client;
}

async function listed(query: string, headers: Record<string, string> = {}): Promise<string[]> {
  const client = await connect(query, headers);
  try {
    return names((await client.listTools()).tools);
  } finally {
    await client.close();
  }
}

describe("readonly fails closed", () => {
  test("a value that is not an explicit false (a typo, an empty value, the bare name) means read-only", async () => {
    for (const query of ["?readonly=maybe", "?readonly=", "?readonly", "?readonly=ture", "?readonly=2", "?readonly=false&readonly=yes"]) {
      expect({ query, tools: await listed(query) }).toEqual({ query, tools: readOnly });
    }
    for (const query of ["?readonly=false", "?readonly=0", "?readonly=NO", "?readonly=off"]) expect({ query, tools: await listed(query) }).toEqual({ query, tools: all });
  });

  test("a write tool called anyway in a read-only session is refused", async () => {
    const client = await connect("?readonly=perhaps");
    try {
      const refused = await client.callTool({ name: "buckets_create", arguments: { name: "not-made" } });
      expect(refused.isError).toBe(true);
      expect(toolError(refused.content)).toMatchObject({ code: "forbidden", message: expect.stringContaining("read-only") });
    } finally {
      await client.close();
    }
  });
});

describe("X-MCP-Toolsets and X-MCP-Readonly", () => {
  const webhooks = names(registry.filter((t) => t.name.startsWith("webhooks_")));
  const webhooksReadOnly = ["webhooks_list", "webhooks_get", "webhooks_deliveries_list"];

  test("narrow as the query does, and add up with it", async () => {
    expect(await listed("", { "x-mcp-toolsets": "webhooks" })).toEqual(webhooks);
    expect(await listed("", { "x-mcp-toolsets": " Webhooks , usage" })).toEqual(names(registry.filter((t) => t.name.startsWith("webhooks_") || t.name.startsWith("usage_"))));
    expect(await listed("", { "x-mcp-toolsets": "webhooks", "x-mcp-readonly": "true" })).toEqual(webhooksReadOnly);
    expect(await listed("", { "x-mcp-readonly": "whatever" })).toEqual(readOnly);
    expect(await listed("", { "x-mcp-readonly": "false" })).toEqual(all);
    // Query and header together: the sets add up, and a read-only from either side wins.
    expect(await listed("?toolsets=usage", { "x-mcp-toolsets": "webhooks" })).toEqual(names(registry.filter((t) => t.name.startsWith("webhooks_") || t.name.startsWith("usage_"))));
    expect(await listed("?toolsets=webhooks&readonly=false", { "x-mcp-readonly": "1" })).toEqual(webhooksReadOnly);
    expect(await listed("?toolsets=webhooks&readonly=yes", { "x-mcp-readonly": "false" })).toEqual(webhooksReadOnly);
  });

  test("an empty or unknown toolset header is a 400 naming toolsets", async () => {
    for (const value of ["", " , ", "media,nonsense"]) {
      const res = await fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${org.adminKey.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream", "x-mcp-toolsets": value },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      const body = (await res.json()) as { error: { code: string; details: { path: string }[] } };
      expect({ value, status: res.status, code: body.error.code, path: body.error.details[0]?.path }).toEqual({ value, status: 400, code: "bad_request", path: "toolsets" });
    }
  });
});
