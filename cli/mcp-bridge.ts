// The MCP SDK is loaded when the bridge starts (dynamic imports below), not by every command.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { AnyTool } from "../tools/define.ts";
import { findTool, registry } from "../tools/registry.ts";
import { ApiError, type RestClient } from "./client.ts";
import { type Command, EXIT } from "./context.ts";

interface Me {
  credential: { scopes: string[] };
}

/** The bridge lists exactly what the key may call: tools of its scopes (admin implies all). */
export function permittedTools(tools: readonly AnyTool[], scopes: readonly string[]): AnyTool[] {
  const has = new Set(scopes);
  return tools.filter((t) => t.scope === "any" || has.has("admin") || has.has(t.scope));
}

/**
 * Tools that answer something other than JSON over REST (a redirect, bytes) cannot return
 * their declared structured output through it, so the bridge lists them without an
 * output schema and returns what REST gives.
 */
function listing(tool: AnyTool, describe: (t: AnyTool) => Tool): Tool {
  const described = describe(tool);
  if (!tool.restResponse) return described;
  const { outputSchema: _, ...rest } = described;
  return rest;
}

/**
 * A stdio MCP server over the same registry as the service's own /mcp endpoint, for desktop
 * agents that launch a local process: every tools/call becomes one REST request with the
 * configured key, so the service enforces scopes, validation and rules exactly as for REST.
 */
export async function createBridge(client: RestClient, tools: readonly AnyTool[], scopes: readonly string[]): Promise<Server> {
  const { Server } = await import("@modelcontextprotocol/sdk/server/index.js");
  const { CallToolRequestSchema, ListToolsRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
  const { describe, failure, INSTRUCTIONS, SERVER_INFO } = await import("../mcp/server.ts");
  const permitted = permittedTools(tools, scopes);
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: permitted.map((t) => listing(t, describe)) }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const { name } = request.params;
    const tool = permitted.find((t) => t.name === name);
    if (!tool) {
      const exists = tools.some((t) => t.name === name);
      return failure(exists ? "forbidden" : "not_found", exists ? "Your credential lacks the scope for this tool" : `Unknown tool '${name}'`, "");
    }
    try {
      const result = await client.callRaw(tool, (request.params.arguments ?? {}) as Record<string, unknown>);
      if (result.kind === "json") {
        return { structuredContent: result.body as Record<string, unknown>, content: [{ type: "text", text: JSON.stringify(result.body) }] };
      }
      if (result.kind === "redirect") {
        const out = { url: result.location };
        return { structuredContent: out, content: [{ type: "text", text: JSON.stringify(out) }] };
      }
      const type = result.response.headers.get("content-type") ?? "application/octet-stream";
      const bytes = new Uint8Array(await result.response.arrayBuffer());
      if (type.startsWith("image/")) return { content: [{ type: "image", data: Buffer.from(bytes).toString("base64"), mimeType: type.split(";")[0]! }] };
      return { content: [{ type: "text", text: `${type}, ${bytes.byteLength} bytes (not shown)` }] };
    } catch (err) {
      if (err instanceof ApiError) return failure(err.code, err.message, err.requestId ?? "", err.details);
      return failure("internal_error", (err as Error).message, "");
    }
  });
  return server;
}

export const mcpCommand: Command = {
  path: ["mcp"],
  section: "setup",
  title: "Run a stdio MCP server that forwards to the REST API",
  description:
    "Speaks MCP on stdin/stdout for desktop agents: lists the registry's tools that the configured key may call (checked with GET /api/me) " +
    "and forwards each tools/call to the REST API. Logs go to stderr only.",
  positionals: [],
  flags: [],
  notes:
    'Agent configuration (e.g. claude_desktop_config.json):\n  { "mcpServers": { "media": { "command": "media", "args": ["mcp"],\n      "env": { "MEDIA_URL": "https://media.example.com", "MEDIA_API_KEY": "..." } } } }',
  async run(ctx) {
    const client = ctx.client();
    const me = await client.call<Me>(findTool("me_get")!, {});
    const server = await createBridge(client, registry, me.credential.scopes);
    const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
    const closed = new Promise<void>((resolve) => {
      server.onclose = () => resolve();
    });
    const transport = new StdioServerTransport();
    await server.connect(transport);
    // The agent closing our stdin ends the session.
    process.stdin.once("end", () => void server.close());
    process.stdin.once("close", () => void server.close());
    await closed;
    return EXIT.ok;
  },
};
