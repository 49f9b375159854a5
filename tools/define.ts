import type { z } from "zod";
import type { Caller, Scope } from "../domain/access/caller.ts";
import type { Deps } from "../domain/core/deps.ts";
import type { ErrorCode } from "../domain/core/errors.ts";
import type { JsonBody } from "../domain/core/json-body.ts";

/** See `reach` on ToolDefinition. */
export type Reach = "bucket" | "organization";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE" | "PATCH";

/** What a handler gets: built by the server from the credential, never from tool input. */
export interface ToolContext {
  caller: Caller;
  deps: Deps;
  requestId: string;
  /** Where the request came from, for the audit log; null when unknown (in-process calls). */
  clientAddress?: string | null;
  /**
   * Over HTTP: lets a call that waits on purpose (wait: true) stay silent up to `seconds`
   * without the server closing the connection as idle.
   */
  holdOpen?: (seconds: number) => void;
  /** MCP only, when the client sent a progress token: reports how far a long call got. */
  progress?: (done: number, total: number | null, message: string) => void;
  /** REST only: the HTTP request, for the few tools whose answer depends on its headers (content negotiation). */
  request?: Request;
  /**
   * The scheme, host and port the request reached (REST and MCP alike), for answers that are
   * URLs of this service when PUBLIC_URL is unset; absent for calls made in-process.
   */
  origin?: string;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint?: boolean;
}

/** A content block an MCP result may carry besides its structured output. */
export type McpContent =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "resource_link"; uri: string; name: string; mimeType?: string };

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  /** snake_case, `<area>_<verb>`; also the MCP tool name and the OpenAPI operationId. */
  name: string;
  title: string;
  /** Written for an agent choosing a tool: what it does, when to use it, what comes next. */
  description: string;
  /** Scope the caller needs; "any" means any valid credential. `admin` implies every scope. */
  scope: Scope | "any";
  /**
   * How far the caller's credential must reach. "bucket": a key restricted to one bucket may
   * use the tool and sees and acts only on its bucket (the domain filters by it).
   * "organization": the tool acts on what every bucket shares (creating and deleting buckets,
   * deleting tags and categories, billing), so a bucket-restricted key may not use it at all.
   */
  reach: Reach;
  input: I;
  output: O;
  /** `produces`: REST answers these bytes (e.g. "image/*") instead of JSON, with ETag and 304 support. */
  http: { method: HttpMethod; path: string; status?: number; produces?: string };
  annotations: ToolAnnotations;
  /** Error codes the handler can produce beyond the ones every tool can. */
  errors: ErrorCode[];
  /**
   * The handler commits its writes without waiting for the WAL flush (soft state, such as an
   * upload URL's reservation), so the call's audit entry is committed that way too: the entry
   * is as durable as what it records, and the answer waits for no flush. Default false.
   */
  unflushed?: boolean;
  /** Its answer, or the answer's JSON text as a JsonBody (REST sends that as it is). */
  handler: (input: z.output<I>, ctx: ToolContext) => Promise<z.input<O> | JsonBody<z.input<O>>>;
  /** REST only: answer something other than JSON (a redirect, a byte stream). */
  restResponse?: (output: z.output<O>, request: Request, ctx: ToolContext) => Response | Promise<Response>;
  /**
   * MCP only: the one-line text a result leads with, where the generic line (mcp/summary.ts,
   * from the output's shape) would say nothing useful.
   */
  mcpSummary?: (output: z.output<O>, input: z.output<I>) => string;
  /** MCP only: content blocks to send besides the structured output. */
  mcpContent?: (output: z.output<O>, ctx: ToolContext) => McpContent[] | Promise<McpContent[]>;
}

// The registry holds tools of many shapes; surfaces only need the erased form.
// biome-ignore lint: erased on purpose
export type AnyTool = ToolDefinition<z.ZodObject, z.ZodObject> & { handler: (input: any, ctx: ToolContext) => Promise<any> };

/** Errors any tool can produce, whatever it declares. */
export const COMMON_ERRORS: ErrorCode[] = ["validation_error", "unauthorized", "forbidden", "rate_limited", "internal_error"];

type Definition<I extends z.ZodObject, O extends z.ZodObject> = Omit<ToolDefinition<I, O>, "annotations" | "errors"> & {
  annotations?: Partial<ToolAnnotations>;
  errors?: ErrorCode[];
};

/**
 * One capability, defined once. REST, MCP, OpenAPI and the CLI are all derived from it.
 * Annotations default from the HTTP method (GET reads; GET and PUT are idempotent; DELETE and
 * PUT destroy: every PUT here replaces what was there) and are overridden where the method
 * says too little. The rule (docs/mcp.md#annotations): a delete, a replace-style update, an
 * overwrite, a secret killed or money spent is destructive; a call that reaches beyond this
 * service (another server, the payment provider) is open-world; idempotent means a second
 * identical call succeeds with the same effect. test/unit/mcp-annotations.test.ts holds the table. A DELETE is not marked
 * idempotent: a repeat changes nothing more, but it answers not_found (the id now names nothing,
 * and an unknown id is a 404 everywhere), and a client told "idempotent" may retry a call whose
 * answer it lost and take that not_found for a failed delete.
 */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: Definition<I, O>): AnyTool {
  const m = def.http.method;
  const annotations: ToolAnnotations = {
    readOnlyHint: m === "GET",
    destructiveHint: m === "DELETE" || m === "PUT",
    idempotentHint: m === "GET" || m === "PUT",
    openWorldHint: false,
    ...def.annotations,
  };
  return { ...def, annotations, errors: def.errors ?? [] } as unknown as AnyTool;
}

/** `{id}` path parameters of a tool's REST path, in order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

/** Where the non-path fields of a tool's input travel over REST. */
export function inputLocation(tool: Pick<AnyTool, "http">): "query" | "body" {
  return tool.http.method === "GET" || tool.http.method === "DELETE" ? "query" : "body";
}
