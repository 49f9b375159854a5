// The MCP SDK is loaded when the bridge starts (dynamic imports below), not by every command.
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { resolve } from "node:path";
import { findTool } from "../tools/registry.ts";
import { parseSelection, TOOLSET_NAMES } from "../tools/toolsets.ts";
import { ApiError, type RestClient } from "./client.ts";
import { type Command, type Context, EXIT } from "./context.ts";
import { downloadTo, isLocalTool, LOCAL_TOOLS, LocalFileError, type LocalToolName, realRoots, rootsFromUris, uploadFiles } from "./mcp-local-files.ts";
import { StorageError } from "./transfer.ts";

/** The JSON-RPC error a request gets when the service could not be asked at all. */
function unreachable(message: JSONRPCMessage, err: unknown): JSONRPCMessage | null {
  if (!("id" in message) || !("method" in message)) return null;
  return { jsonrpc: "2.0", id: message.id, error: { code: -32000, message: `The media service did not answer: ${(err as Error).message}` } };
}

/** What the bridge adds to the remote tools: the local-file tools, and where they may reach. */
export interface LocalFiles {
  ctx: Context;
  /** `--root` directories; the client's roots (roots/list) add to them. */
  roots: string[];
  tools: LocalToolName[];
}

type Message = JSONRPCMessage & { id?: string | number; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: unknown };

/**
 * A stdio MCP server for desktop agents that launch a local process. It relays every message
 * to the service's /mcp endpoint with the configured key and every answer back unchanged, so
 * the remote tools listed, their schemas, results and errors are exactly those of /mcp (the
 * same server answers both). It adds only what needs the local disk: upload_files and
 * download_to (cli/mcp-local-files.ts), listed after the remote tools and run here. Returns
 * when stdin closes.
 */
export async function relayStdioToHttp(client: RestClient, query = "", files: LocalFiles | null = null): Promise<void> {
  const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const remote = new StreamableHTTPClientTransport(new URL(`/mcp${query}`, client.url), { requestInit: { headers: client.headers() } });
  const local = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    local.onclose = () => resolve();
  });

  // Answers go out in the order they came, and an answer that follows notifications waits a
  // moment: the SDK's client handles a notification a tick after reading it and forgets a
  // call's progress token at its result, so notifications read in one chunk with the result
  // would be dropped on its side.
  let relaying: Promise<void> = Promise.resolve();
  let notified = false;
  const toLocal = (message: JSONRPCMessage) => {
    const isAnswer = "id" in message && !("method" in message);
    relaying = relaying
      .then(async () => {
        if (isAnswer && notified) await new Promise((resolve) => setTimeout(resolve, 20));
        notified = !isAnswer;
        await local.send(message);
      })
      .catch((err) => void process.stderr.write(`media mcp: ${(err as Error).message}\n`));
  };

  // Requests the bridge itself sends the client (roots/list), by id.
  const asked = new Map<string, (answer: Message) => void>();
  let askedCount = 0;
  const askClient = (method: string): Promise<Message> =>
    new Promise((resolve) => {
      const id = `media-mcp-${++askedCount}`;
      asked.set(id, resolve);
      toLocal({ jsonrpc: "2.0", id, method } as JSONRPCMessage);
    });
  let clientHasRoots = false;
  const listings = new Set<string | number>();

  local.onmessage = (raw) => {
    const message = raw as Message;
    if (message.id !== undefined && !message.method && typeof message.id === "string" && asked.has(message.id)) {
      asked.get(message.id)!(message);
      asked.delete(message.id);
      return;
    }
    if (message.method === "initialize") clientHasRoots = Boolean((message.params?.capabilities as { roots?: unknown } | undefined)?.roots);
    if (files && message.method === "tools/list" && message.id !== undefined) listings.add(message.id);
    if (files && message.method === "tools/call" && message.id !== undefined && isLocalTool(message.params?.name) && files.tools.includes(message.params.name)) {
      void runLocal(message, files).then(toLocal);
      return;
    }
    // The service is stateless: a change of roots matters only here, where they are asked for at each call.
    if (message.method === "notifications/roots/list_changed") return;
    remote.send(raw).catch((err) => {
      const answer = unreachable(raw, err);
      if (answer) toLocal(answer);
      else process.stderr.write(`media mcp: ${(err as Error).message}\n`);
    });
  };

  remote.onmessage = (raw) => {
    const message = raw as Message;
    // Later requests carry the negotiated version, as a direct client's would.
    const version = message.result?.protocolVersion;
    if (typeof version === "string") remote.setProtocolVersion(version);
    if (files && message.id !== undefined && listings.delete(message.id) && Array.isArray(message.result?.tools)) {
      // Each local tool only where the key may use the remote tool it is made of.
      const remoteTools = message.result.tools as { name: string }[];
      const has = (name: string) => remoteTools.some((t) => t.name === name);
      const offered = LOCAL_TOOLS.filter((t) => files.tools.includes(t.name) && has(t.name === "upload_files" ? "presign_upload" : "presign_download"));
      toLocal({ ...raw, result: { ...message.result, tools: [...remoteTools, ...offered] } } as JSONRPCMessage);
      return;
    }
    toLocal(raw);
  };

  async function allowedRoots(local: LocalFiles): Promise<string[]> {
    const dirs = [...local.roots];
    if (clientHasRoots) {
      const answer = await askClient("roots/list");
      const roots = (answer.result as { roots?: { uri: string }[] } | undefined)?.roots;
      if (Array.isArray(roots)) dirs.push(...rootsFromUris(roots));
    }
    return realRoots(dirs);
  }

  async function runLocal(message: Message, local: LocalFiles): Promise<JSONRPCMessage> {
    const params = message.params as { name: LocalToolName; arguments?: Record<string, unknown>; _meta?: { progressToken?: string | number } };
    const token = params._meta?.progressToken;
    let last = -1;
    let lastAt = 0;
    const progress = (done: number, total: number, text: string) => {
      // Every value above the last, as the spec asks, and not more than ten a second.
      if (token === undefined || done <= last || (done < total && performance.now() - lastAt < 100)) return;
      last = done;
      lastAt = performance.now();
      toLocal({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: done, total, message: text } } as JSONRPCMessage);
    };
    const answer = (result: Record<string, unknown>) => ({ jsonrpc: "2.0", id: message.id!, result }) as JSONRPCMessage;
    try {
      const roots = await allowedRoots(local);
      if (roots.length === 0) {
        throw new LocalFileError(
          "forbidden",
          `${params.name} reaches only into allowed directories, and there are none: start media mcp with --root <dir>, or have the client declare roots`,
        );
      }
      const call = { client, ctx: local.ctx, roots, progress };
      const args = params.arguments ?? {};
      const output = params.name === "upload_files" ? await uploadFiles(args, call) : await downloadTo(args, call);
      const line =
        params.name === "upload_files"
          ? `Uploaded ${(output as { uploaded: unknown[] }).uploaded.length} file(s), ${(output as { failed: unknown[] }).failed.length} failed`
          : `Downloaded ${(output as { key: string }).key} to ${(output as { file: string }).file} (${(output as { size: number }).size} bytes)`;
      return answer({ structuredContent: output, content: [{ type: "text", text: line }, { type: "text", text: JSON.stringify(output) }] });
    } catch (err) {
      const known = err instanceof LocalFileError || err instanceof ApiError || err instanceof StorageError;
      const code = known ? (err as { code: string }).code : "internal_error";
      const text = known ? (err as Error).message : `media mcp: ${(err as Error).message}`;
      const error = { code, message: text };
      return answer({ isError: true, content: [{ type: "text", text: `Error ${code}: ${text}` }, { type: "text", text: JSON.stringify({ error }) }] });
    }
  }

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
    "so an agent sees exactly what /mcp offers that key. The key is checked first (GET /api/me). Logs go to stderr only. " +
    "It adds two tools of its own that use this machine's disk, upload_files and download_to, which reach only into the client's roots and the --root directories.",
  positionals: [],
  flags: [
    { name: "toolsets", type: "string", list: true, placeholder: "set,set", description: `Offer only these toolsets (${TOOLSET_NAMES.join(", ")}, default, all); without it, every tool the key may use` },
    { name: "readOnly", type: "boolean", description: "Offer and run only tools that change nothing" },
    { name: "root", type: "string", list: true, placeholder: "dir", description: "A directory upload_files may read and download_to may write (repeatable); the client's MCP roots count too" },
  ],
  notes:
    'Agent configuration (e.g. claude_desktop_config.json):\n  { "mcpServers": { "media": { "command": "media", "args": ["mcp"],\n      "env": { "MEDIA_URL": "https://media.example.com", "MEDIA_API_KEY": "..." } } } }',
  async run(ctx, args) {
    const v = args.values as { toolsets?: string[]; readOnly?: boolean; root?: string[] };
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
    // The local-file tools are part of the upload toolset, and both write (storage, or the disk).
    const offered = !selection.readOnly && (selection.toolsets.includes("all") || selection.toolsets.includes("upload"));
    const files: LocalFiles = { ctx, roots: (v.root ?? []).map((r) => resolve(r)), tools: offered ? LOCAL_TOOLS.map((t) => t.name) : [] };
    await relayStdioToHttp(client, query, files);
    return EXIT.ok;
  },
};
