import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Deps } from "../domain/core/deps.ts";
import { readBody } from "../http/body.ts";
import { callerOf, type HttpContext } from "../http/pipeline.ts";
import { errors } from "../domain/core/errors.ts";
import { parseSelection } from "../tools/toolsets.ts";
import { createMcpServer } from "./server.ts";

/**
 * Streamable HTTP at /mcp, stateless (no session ids): each POST carries its own
 * credential and gets its own server. GET (a standalone event stream) and DELETE (end of
 * a session) mean nothing without sessions, so they answer 405 as the transport spec allows.
 */
/**
 * Whether a tool call is answered as an event stream, so its log and progress notifications
 * can travel before the result: a tools/call (a batch never streams) from a client that accepts
 * one, and either asked for progress or speaks the protocol as a client library does (it sends
 * MCP-Protocol-Version on every request after initialize, as the spec requires). A bare script
 * that posts one call and reads JSON, as the web console does, still gets one JSON body.
 */
function streamsNotifications(text: string, headers: Headers): boolean {
  if (!text.includes("tools/call") || !(headers.get("accept") ?? "").includes("text/event-stream")) return false;
  try {
    const message = JSON.parse(text) as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } };
    if (message.method !== "tools/call") return false;
    return message.params?._meta?.progressToken !== undefined || headers.has("mcp-protocol-version");
  } catch {
    return false;
  }
}

/** Every value of a choice: the query parameter's occurrences, then the header's (repeated headers arrive joined by commas). */
function choice(ctx: HttpContext, parameter: string, header: string): string[] {
  const sent = ctx.request.headers.get(header);
  return [...ctx.url.searchParams.getAll(parameter), ...(sent === null ? [] : sent.split(","))];
}

export function mcpOverHttp(deps: Deps) {
  return async (ctx: HttpContext): Promise<Response> => {
    if (ctx.request.method !== "POST") {
      return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: this server is stateless, use POST" }, id: null }), {
        status: 405,
        headers: { allow: "POST", "content-type": "application/json" },
      });
    }
    // No parameter: every tool the credential may use. Both parameters only narrow (tools/toolsets.ts).
    // Hosts that cannot edit the URL send the same choice as headers; both places add up.
    const selection = parseSelection(choice(ctx, "toolsets", "x-mcp-toolsets"), choice(ctx, "readonly", "x-mcp-readonly"));
    if ("error" in selection) throw errors.badRequest(selection.error, [{ path: selection.parameter, message: selection.error }]);
    // The same body limit as REST (413 before buffering it all); the transport then reads the copy.
    const text = await readBody(ctx.request, deps.config.maxBodyBytes);
    if (isBatch(text)) return batchRefused();
    const request = new Request(ctx.request.url, { method: "POST", headers: ctx.request.headers, body: text });
    let n = 0;
    const server = createMcpServer(deps, callerOf(ctx), () => (n++ === 0 ? ctx.requestId : `${ctx.requestId}.${n}`), undefined, ctx.clientAddress, selection, ctx.holdOpen, ctx.url.origin);
    const stream = streamsNotifications(text, ctx.request.headers);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !stream });
    await server.connect(transport);
    let response: Response;
    try {
      response = await transport.handleRequest(request);
    } catch (err) {
      void server.close();
      throw err;
    }
    // With JSON the answer is complete once handleRequest returns; a stream ends after the result.
    if (!stream || !response.body) {
      void server.close();
      return response;
    }
    const closing = new TransformStream<Uint8Array, Uint8Array>({ flush: () => void server.close() });
    void response.body.pipeTo(closing.writable).catch(() => void server.close());
    return new Response(closing.readable, { status: response.status, headers: response.headers });
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
