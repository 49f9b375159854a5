import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Deps } from "../domain/core/deps.ts";
import { readBody } from "../http/body.ts";
import { callerOf, type HttpContext } from "../http/pipeline.ts";
import { createMcpServer } from "./server.ts";

/**
 * Streamable HTTP at /mcp, stateless (no session ids): each POST carries its own
 * credential and gets its own server. GET (a standalone event stream) and DELETE (end of
 * a session) mean nothing without sessions, so they answer 405 as the transport spec allows.
 */
export function mcpOverHttp(deps: Deps) {
  return async (ctx: HttpContext): Promise<Response> => {
    if (ctx.request.method !== "POST") {
      return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: this server is stateless, use POST" }, id: null }), {
        status: 405,
        headers: { allow: "POST", "content-type": "application/json" },
      });
    }
    // The same body limit as REST (413 before buffering it all); the transport then reads the copy.
    const text = await readBody(ctx.request, deps.config.maxBodyBytes);
    if (isBatch(text)) return batchRefused();
    const request = new Request(ctx.request.url, { method: "POST", headers: ctx.request.headers, body: text });
    let n = 0;
    const server = createMcpServer(deps, callerOf(ctx), () => (n++ === 0 ? ctx.requestId : `${ctx.requestId}.${n}`), undefined, ctx.clientAddress);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      // With JSON responses the answer is complete once handleRequest returns.
      void server.close();
    }
  };
}

/**
 * MCP 2025-06-18 removed JSON-RPC batching. Accepting a batch let one POST run up to a hundred
 * tool calls while the rate limit and the month's API calls counted one (2026 attack run): a batch is
 * refused whole, before any element runs, with JSON-RPC's "Invalid Request" and HTTP 400.
 * Only the first non-blank character matters: a body that is not JSON at all is left to the
 * transport's parse error.
 */
function isBatch(text: string): boolean {
  return /^\s*\[/.test(text);
}

function batchRefused(): Response {
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", error: { code: -32600, message: "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18); send one message per POST" }, id: null }),
    { status: 400, headers: { "content-type": "application/json" } },
  );
}
