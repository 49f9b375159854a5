import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { type CallToolRequest, type CallToolResult, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Caller } from "../domain/access/caller.ts";
import type { Deps } from "../domain/core/deps.ts";
import type { AnyTool } from "../tools/define.ts";
import { toAppError } from "../tools/failure.ts";
import { invokeTool, toolAllowed } from "../tools/invoke.ts";
import { inputJsonSchema, outputJsonSchema } from "../tools/json-schema.ts";

export const SERVER_INFO = { name: "media-storage", version: "0.1.0" };

export const INSTRUCTIONS = `Media storage: buckets of media objects (images, video, audio, PDFs, 3D, other files) with tags, categories, sets, storyboards and search.
Bytes never travel through tool arguments. To upload: call presign_upload (or the multipart tools for large files), PUT the bytes to the returned url with the returned headers, then call presign_confirm. To download: presign_download returns a short-lived URL.
Tools you do not see need scopes your credential lacks.`;

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
 * An MCP server over the registry for one authenticated caller. Stateless: a fresh server
 * per HTTP request, so nothing is kept between calls and the caller can never change mid-session.
 * The low-level Server is used because tools are data here: listing is filtered by scope,
 * and an empty list is still a list (McpServer answers "method not found" without tools).
 */
export function createMcpServer(tools: readonly AnyTool[], deps: Deps, caller: Caller, requestId: () => string): Server {
  const permitted = tools.filter((t) => toolAllowed(t, caller));
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: permitted.map(describe) }));

  server.setRequestHandler(LooseCallToolRequest, async (raw): Promise<CallToolResult> => {
    const request = raw as CallToolRequest;
    const id = requestId();
    const tool = permitted.find((t) => t.name === request.params.name);
    if (!tool) {
      const exists = tools.some((t) => t.name === request.params.name);
      return failure(exists ? "forbidden" : "not_found", exists ? "Your credential lacks the scope for this tool" : `Unknown tool '${request.params.name}'`, id);
    }
    const ctx = { caller, deps, requestId: id };
    try {
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
