import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { type CallToolRequest, type CallToolResult, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Caller } from "../domain/access/caller.ts";
import type { Deps } from "../domain/core/deps.ts";
import { toolsFor } from "../tools/access.ts";
import type { AnyTool } from "../tools/define.ts";
import { toAppError } from "../tools/failure.ts";
import { invokeTool } from "../tools/invoke.ts";
import { inputJsonSchema, outputJsonSchema } from "../tools/json-schema.ts";
import { INSTRUCTIONS, registry, SERVER_INFO } from "../tools/registry.ts";

export function describe(tool: AnyTool): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: inputJsonSchema(tool) as Tool["inputSchema"],
    outputSchema: outputJsonSchema(tool) as Tool["outputSchema"],
    annotations: { title: tool.title, ...tool.annotations },
  };
}

/**
 * The SDK's Server checks tools/call params against its own schema and answers -32602 when
 * they are wrong (arguments not an object, no name). Registered with that same strict schema,
 * a bad request would fail the registration's parse first and come back as -32603 internal error.
 */
const LooseCallToolRequest = z.object({ method: z.literal("tools/call"), params: z.unknown() });

/**
 * The MCP server over the registry for one authenticated caller: the only one there is. /mcp
 * makes one per HTTP request (stateless, so nothing is kept between calls and the caller can
 * never change mid-session), and the CLI's stdio bridge relays to /mcp, so both answer alike.
 * The low-level Server is used because tools are data here: the listing is what the caller
 * may use of `tools` (tools/access.ts), and an empty list is still a list (McpServer answers
 * "method not found" without tools).
 */
export function createMcpServer(
  deps: Deps,
  caller: Caller,
  requestId: () => string,
  tools: readonly AnyTool[] = registry,
  clientAddress: string | null = null,
): Server {
  const listed = toolsFor(tools, caller).map(describe);
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));

  server.setRequestHandler(LooseCallToolRequest, async (raw): Promise<CallToolResult> => {
    const request = raw as CallToolRequest;
    const id = requestId();
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) return failure("not_found", `Unknown tool '${request.params.name}'`, id);
    const ctx = { caller, deps, requestId: id, clientAddress };
    try {
      // invokeTool refuses a tool the caller may not use (not listed) with the REST 403.
      const output = await invokeTool(tool, request.params.arguments ?? {}, ctx);
      const extra = tool.mcpContent ? await tool.mcpContent(output as never, ctx) : [];
      return {
        structuredContent: output as Record<string, unknown>,
        content: [{ type: "text", text: JSON.stringify(output) }, ...extra],
      };
    } catch (err) {
      const e = toAppError(err, deps.log, id);
      return failure(e.code, e.message, id, e.details);
    }
  });
  return server;
}

/** Domain errors reach the agent as tool errors carrying the REST envelope's code and message. */
export function failure(code: string, message: string, requestId: string, details?: unknown): CallToolResult {
  const error = { code, message, ...(details !== undefined ? { details } : {}), requestId };
  return { isError: true, content: [{ type: "text", text: JSON.stringify({ error }) }] };
}
