import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  type CallToolRequest,
  type CallToolResult,
  ListToolsRequestSchema,
  type LoggingLevel,
  SetLevelRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Caller } from "../domain/access/caller.ts";
import type { Deps } from "../domain/core/deps.ts";
import { toolsFor } from "../tools/access.ts";
import type { AnyTool, ToolContext } from "../tools/define.ts";
import { agentMessage, toAppError } from "../tools/failure.ts";
import { invokeTool } from "../tools/invoke.ts";
import { mcpJsonSchema, mcpOutputSchemas } from "../tools/json-schema.ts";
import { serveResources } from "./resources.ts";
import { errorLine, summarize } from "./summary.ts";
import { ALL_TOOLS, selectTools, TOOLSET_NAMES, type ToolSelection, toolsetOf } from "../tools/toolsets.ts";
import { INSTRUCTIONS, registry, SERVER_INFO } from "../tools/registry.ts";

type LogLevel = LoggingLevel;
const LOG_LEVELS: LogLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

const listings = new Map<string, Tool[]>();

/**
 * The tools/list entries of these tools, in the compact form of tools/json-schema.ts (a large
 * resource described once per listing). Built once per distinct listing: a listing depends only
 * on which tools it holds.
 */
export function describeTools(tools: readonly AnyTool[]): Tool[] {
  const key = tools.map((t) => t.name).join(",");
  const hit = listings.get(key);
  if (hit) return hit;
  const outputs = mcpOutputSchemas(tools);
  const listed = tools.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: mcpJsonSchema(tool, "input") as Tool["inputSchema"],
    outputSchema: outputs.get(tool.name) as Tool["outputSchema"],
    annotations: { ...tool.annotations },
  }));
  listings.set(key, listed);
  return listed;
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
  selection: ToolSelection = ALL_TOOLS,
  holdOpen?: (seconds: number) => void,
  /** Where the request reached the service, for tools that answer a URL of it (ToolContext.origin). */
  origin?: string,
): Server {
  const listed = describeTools(selectTools(toolsFor(tools, caller), selection));
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, completions: {}, logging: {} },
    instructions: INSTRUCTIONS,
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  // Each resource request takes its request id when it runs, as a tool call does.
  serveResources(server, () => ({ caller, deps, requestId: requestId(), clientAddress, ...(origin ? { origin } : {}) }));

  // Stateless: a level set here lasts for this HTTP request only (a later request is a new
  // server), so it filters only the notifications of a batch that carries it; accepting it is
  // what the spec asks, and tool-call notices are "info" or "warning", below most clients' filters.
  let minimum = LOG_LEVELS.indexOf("info");
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    minimum = LOG_LEVELS.indexOf(request.params.level);
    return {};
  });

  server.setRequestHandler(LooseCallToolRequest, async (raw, extra): Promise<CallToolResult> => {
    const request = raw as CallToolRequest;
    const id = requestId();
    const progressToken = request.params?._meta?.progressToken;
    const name = request.params?.name;
    // Notifications travel on this request's own event stream (mcp/http.ts opens one for a
    // tool call when the client can read it); otherwise there is nowhere to send them and the
    // transport drops them. Sent one after another, and all before the result: a notification
    // that overtook the result would reach a client that has already forgotten the progress token.
    let sending: Promise<void> = Promise.resolve();
    const notify = (method: string, params: Record<string, unknown>) => {
      sending = sending.then(() => extra.sendNotification({ method, params } as never)).catch(() => undefined);
    };
    const log = (level: LogLevel, data: Record<string, unknown>) => {
      if (LOG_LEVELS.indexOf(level) >= minimum) notify("notifications/message", { level, logger: "media-storage", data });
    };
    // Progress: every value above the last (the spec's rule), so a repeated value is not sent.
    // The call's own steps are 0 (received), 0.5 (running: found, allowed, handed to the tool),
    // 0.9 (the tool answered; the result is being put together, a thumbnail read) and 1 (done),
    // of 1: a client that loses the last one, read with the result, still saw three. A tool with
    // a measure of its own (an import's bytes, a set's items) reports it after "running", and its
    // last value, when it reached its total, is the end.
    let last = -1;
    const step = (done: number, total: number | null, message: string) => {
      if (progressToken === undefined || done <= last) return;
      last = done;
      notify("notifications/progress", { progressToken, progress: done, ...(total !== null ? { total } : {}), message });
    };
    const started = performance.now();
    step(0, 1, `${name} started`);
    log("info", { tool: name, requestId: id, event: "started" });
    let ownTotal: number | null = null;
    let reachedOwnTotal = false;
    const running = () => {
      step(0.5, 1, `${name} running`);
      log("info", { tool: name, requestId: id, event: "running" });
    };
    const answered = () => step(0.9, 1, `${name} answered`);
    const result = await callTool(request, id, running, answered, (done, total, message) => {
      ownTotal = total;
      step(done, total, message);
      reachedOwnTotal = total !== null && last === total;
    });
    const ms = Math.round(performance.now() - started);
    log(result.isError ? "warning" : "info", { tool: name, requestId: id, ms, ok: !result.isError });
    if (!reachedOwnTotal) step(ownTotal ?? 1, ownTotal ?? 1, `${name} ${result.isError ? "failed" : "done"}`);
    await sending;
    return result;
  });

  async function callTool(request: CallToolRequest, id: string, running: () => void, answered: () => void, onProgress: NonNullable<ToolContext["progress"]>): Promise<CallToolResult> {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) return failure("not_found", unknownTool(String(request.params.name), tools), id);
    // Toolsets only save context (a tool outside them still runs if the credential allows it);
    // read-only mode is a promise the client asked for, so it is kept on calls too.
    if (selection.readOnly && !tool.annotations.readOnlyHint) return failure("forbidden", `${tool.name} changes data, and this session is read-only`, id);
    running();
    const ctx: ToolContext = { caller, deps, requestId: id, clientAddress, progress: onProgress, ...(holdOpen ? { holdOpen } : {}), ...(origin ? { origin } : {}) };
    try {
      // invokeTool refuses a tool the caller may not use (not listed) with the REST 403.
      const input = request.params.arguments ?? {};
      const output = (await invokeTool(tool, input, ctx)) as Record<string, unknown>;
      answered();
      const extra = tool.mcpContent ? await tool.mcpContent(output as never, ctx) : [];
      // A short line first, for the agent's eye and for hosts that show one block; then the
      // whole answer as JSON, which the spec asks for beside structuredContent and which is all
      // that hosts handing only `content` to the model can give it (docs/mcp.md#tool-results).
      return {
        structuredContent: output,
        content: [{ type: "text", text: summarize(tool, input, output) }, { type: "text", text: JSON.stringify(output) }, ...extra],
      };
    } catch (err) {
      const e = toAppError(err, deps.log, id);
      return failure(e.code, agentMessage(e, (path) => fieldHint(tool, path)), id, e.details);
    }
  }
  return server;
}

/** An unknown tool's error names where a tool of that name would be: the bridge, or the toolset its prefix belongs to. */
function unknownTool(name: string, tools: readonly AnyTool[]): string {
  if (name === "upload_files" || name === "download_to") return `Unknown tool '${name}': it runs only in media mcp (the stdio bridge on the machine with the files)`;
  const set = toolsetOf({ name });
  if (!set) return `Unknown tool '${name}': no toolset has it; tools/list names every tool (toolsets: ${TOOLSET_NAMES.join(", ")})`;
  const members = tools.filter((t) => toolsetOf(t) === set).map((t) => t.name);
  return `Unknown tool '${name}': the ${set} toolset has ${members.join(", ")}`;
}

/**
 * What to send instead, for a field a validation error names: the field's own description
 * (as tools/list gives it), or for an unknown or missing field, the fields there are.
 */
function fieldHint(tool: AnyTool, path: string): string | undefined {
  const schema = mcpJsonSchema(tool, "input") as { properties?: Record<string, { description?: string }> };
  const field = schema.properties?.[path.split(".")[0] ?? ""];
  if (field?.description) return field.description.length > 160 ? `${field.description.slice(0, 157)}...` : field.description;
  const names = Object.keys(schema.properties ?? {});
  return names.length > 0 ? `only these fields: ${names.join(", ")}` : undefined;
}

/** Domain errors reach the agent as tool errors: a line with the code and message, then the REST envelope. */
export function failure(code: string, message: string, requestId: string, details?: unknown): CallToolResult {
  const error = { code, message, ...(details !== undefined ? { details } : {}), requestId };
  return { isError: true, content: [{ type: "text", text: errorLine(code, message) }, { type: "text", text: JSON.stringify({ error }) }] };
}
