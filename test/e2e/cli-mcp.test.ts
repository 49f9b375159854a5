import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { registry } from "../../tools/registry.ts";
import { CLI, cliEnv, removeTempConfigHomes, runCli } from "../support/cli.ts";
import { withServerAndOrg } from "../support/fixtures.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { textBlocks, toolError } from "../support/mcp-results.ts";

// One pass: the stdio bridge relays to /mcp; the backends behind it are the integration tests' business.

setDefaultTimeout(60_000);

const LOCAL = ["upload_files", "download_to"];

let server: TestServer;
let org: TestOrg;

withServerAndOrg({ ready: (made) => void ({ server, org } = made), cleanup: removeTempConfigHomes });

/** `media mcp` as a desktop agent launches it: a child process speaking MCP on stdio. */
async function bridge(key: string, flags: string[] = ["--toolsets", "all"]): Promise<Client> {
  const client = new Client({ name: "desktop-agent", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", ...flags], env: cliEnv({ url: server.url, key }), stderr: "pipe" }));
  return client;
}

function errorOf(result: { content: unknown; isError?: boolean }) {
  expect(result.isError).toBe(true);
  return toolError(result.content);
}

describe("media mcp (stdio relay to /mcp)", () => {
  test("tools/list is the registry with the same schemas and annotations as /mcp", async () => {
    const client = await bridge(org.adminKey.secret);
    try {
      expect(client.getServerVersion()?.name).toBe("media-storage");
      expect(client.getInstructions()).toContain("presign_upload");
      const { tools } = await client.listTools();
      // The remote tools, then the bridge's own local-file tools (test/e2e/cli-mcp-local-files.test.ts).
      expect(tools.map((t) => t.name).sort()).toEqual([...registry.map((t) => t.name), ...LOCAL].sort());
      const create = tools.find((t) => t.name === "buckets_create")!;
      expect(create.inputSchema.required).toEqual(["name"]);
      expect(create.outputSchema?.type).toBe("object");
      expect(create.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
      // the bridge relays to /mcp, so a tool that redirects over REST keeps its output schema there too
      expect(tools.find((t) => t.name === "media_stream")!.outputSchema?.type).toBe("object");
    } finally {
      await client.close();
    }
  });

  test("tools/list reflects the key's scopes", async () => {
    const reader = await org.keyClient(["read"]);
    const client = await bridge(reader.secret);
    try {
      const { tools } = await client.listTools();
      // A read key may download (presign_download), not upload: download_to is offered, upload_files not.
      const expected = [...registry.filter((t) => t.scope === "read" || t.scope === "any").map((t) => t.name), "download_to"].sort();
      expect(tools.map((t) => t.name).sort()).toEqual(expected);
      const refused = await client.callTool({ name: "buckets_create", arguments: { name: "nope" } });
      expect(errorOf(refused as never).code).toBe("forbidden");
    } finally {
      await client.close();
    }
  });

  test("calls are relayed to /mcp: structuredContent on success, the envelope's code and message on failure", async () => {
    const client = await bridge(org.adminKey.secret);
    try {
      const created = await client.callTool({ name: "buckets_create", arguments: { name: "via-bridge" } });
      expect(created.isError).toBeFalsy();
      const bucket = created.structuredContent as { id: string; name: string };
      expect(bucket.name).toBe("via-bridge");
      const listed = await client.callTool({ name: "buckets_list", arguments: {} });
      expect((listed.structuredContent as { data: { name: string }[] }).data.map((b) => b.name)).toContain("via-bridge");
      // the service holds the state: REST sees it
      expect((await org.admin.get(`/api/buckets/${bucket.id}`)).body.name).toBe("via-bridge");
      // path parameters come from the arguments
      const got = await client.callTool({ name: "buckets_get", arguments: { id: bucket.id } });
      expect(got.structuredContent).toEqual(bucket as never);
      // relayed unchanged: the summary line, then the JSON
      expect(textBlocks(got.content)).toEqual([`Bucket "via-bridge"; id ${bucket.id}`, JSON.stringify(got.structuredContent)]);

      expect(errorOf((await client.callTool({ name: "buckets_get", arguments: { id: crypto.randomUUID() } })) as never)).toMatchObject({
        code: "not_found",
        message: "Bucket not found",
      });
      const invalid = errorOf((await client.callTool({ name: "buckets_create", arguments: { name: "bad name!" } })) as never);
      expect(invalid.code).toBe("validation_error");
      expect(invalid.details).toEqual([{ path: "name", message: expect.any(String) }]);
      expect(errorOf((await client.callTool({ name: "no_such_tool", arguments: {} })) as never).code).toBe("not_found");
    } finally {
      await client.close();
    }
  });

  test("--toolsets and --read-only choose the tools as /mcp's query does", async () => {
    const client = await bridge(org.adminKey.secret, ["--toolsets", "search,buckets", "--read-only"]);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["buckets_get", "buckets_list", "media_duplicates", "media_similar", "search"]);
      const refused = await client.callTool({ name: "buckets_create", arguments: { name: "read-only" } });
      expect(errorOf(refused as never)).toMatchObject({ code: "forbidden", message: expect.stringContaining("read-only") });
    } finally {
      await client.close();
    }
    const unknown = await runCli(["mcp", "--toolsets", "nonsense"], { url: server.url, key: org.adminKey.secret, stdin: "" });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown toolset nonsense");
    // An empty choice is refused as /mcp refuses `toolsets=`, not read as "every tool".
    const empty = await runCli(["mcp", "--toolsets", ""], { url: server.url, key: org.adminKey.secret, stdin: "" });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("--toolsets");
  });

  test("without flags the bridge offers every tool the key may use, as the bare /mcp does", async () => {
    const client = await bridge(org.adminKey.secret, []);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([...registry.map((t) => t.name), ...LOCAL]);
    } finally {
      await client.close();
    }
  });

  test("a bad key stops the bridge at start with a clear message", async () => {
    const r = await runCli(["mcp"], { url: server.url, key: "e".repeat(64), stdin: "" });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("Invalid API key");
  });
});
