// The MCP SDK is loaded when the bridge starts (dynamic imports below), not by every command.
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { findTool } from "../tools/registry.ts";
import { parseSelection, TOOLSET_NAMES } from "../tools/toolsets.ts";
import type { RestClient } from "./client.ts";
import { type Command, EXIT } from "./context.ts";

/** The JSON-RPC error a request gets when the service could not be asked at all. */
function unreachable(message: JSONRPCMessage, err: unknown): JSONRPCMessage | null {
  if (!("id" in message) || !("method" in message)) return null;
  return { jsonrpc: "2.0", id: message.id, error: { code: -32000, message: `The media service did not answer: ${(err as Error).message}` } };
}

/**
 * A stdio MCP server for desktop agents that launch a local process. It holds no MCP logic
 * of its own: every message goes to the service's /mcp endpoint with the configured key and
 * every answer comes back unchanged, so the tools listed, their schemas, results and errors
 * are exactly those of /mcp (the same server answers both). Returns when stdin closes.
 */
export async function relayStdioToHttp(client: RestClient, query = ""): Promise<void> {
  const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const remote = new StreamableHTTPClientTransport(new URL(`/mcp${query}`, client.url), { requestInit: { headers: client.headers() } });
  const local = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    local.onclose = () => resolve();
  });
  local.onmessage = (message) => {
    remote.send(message).catch((err) => {
      const answer = unreachable(message, err);
      if (answer) void local.send(answer);
      else process.stderr.write(`media mcp: ${(err as Error).message}\n`);
    });
  };
  remote.onmessage = (message) => {
    // Later requests carry the negotiated version, as a direct client's would.
    const result = "result" in message ? (message.result as { protocolVersion?: unknown }) : null;
    if (typeof result?.protocolVersion === "string") remote.setProtocolVersion(result.protocolVersion);
    void local.send(message);
  };
  remote.onerror = (err) => process.stderr.write(`media mcp: ${err.message}\n`);
  await remote.start();
  await local.start();
  // The agent closing our stdin ends the session.
  process.stdin.once("end", () => void local.close());
  await closed;
  await remote.close();
}

export const mcpCommand: Command = {
  path: ["mcp"],
  section: "setup",
  title: "Run a stdio MCP server that relays to the service's /mcp",
  description:
    "Speaks MCP on stdin/stdout for desktop agents and relays every message to the service's MCP endpoint with the configured key, " +
    "so an agent sees exactly what /mcp offers that key. The key is checked first (GET /api/me). Logs go to stderr only.",
  positionals: [],
  flags: [
    { name: "toolsets", type: "string", list: true, placeholder: "set,set", description: `Offer only these toolsets (${TOOLSET_NAMES.join(", ")}, default, all); without it, every tool the key may use` },
    { name: "readOnly", type: "boolean", description: "Offer and run only tools that change nothing" },
  ],
  notes:
    'Agent configuration (e.g. claude_desktop_config.json):\n  { "mcpServers": { "media": { "command": "media", "args": ["mcp"],\n      "env": { "MEDIA_URL": "https://media.example.com", "MEDIA_API_KEY": "..." } } } }',
  async run(ctx, args) {
    const v = args.values as { toolsets?: string[]; readOnly?: boolean };
    const client = ctx.client();
    // The same choice /mcp takes in its query, checked by the same parser so a bad choice
    // stops here as a usage error; the service checks it again.
    // `--toolsets ""` parses to an empty list: refused as `toolsets=` is, not read as "no flag".
    const toolsets = v.toolsets === undefined ? [] : v.toolsets.length === 0 ? [""] : v.toolsets;
    const selection = parseSelection(toolsets, v.readOnly ? ["true"] : []);
    if ("error" in selection) {
      ctx.err(`media mcp: --toolsets: ${selection.error}\n`);
      return EXIT.usage;
    }
    const params = new URLSearchParams();
    for (const value of toolsets) params.append("toolsets", value);
    if (v.readOnly) params.set("readonly", "true");
    const query = params.size > 0 ? `?${params}` : "";
    // A refused key stops here with the service's message and the CLI's exit code.
    await client.call(findTool("me_get")!, {});
    await relayStdioToHttp(client, query);
    return EXIT.ok;
  },
};
