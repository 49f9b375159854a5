import { computed, signal } from "@preact/signals";
import routes from "console:routes";
import { ApiError, toolRequest } from "../../cli/client.ts";
import type { Scope } from "../../domain/access/caller.ts";
import { mayUse, refusal } from "../../tools/access.ts";
import type { ToolRoute } from "../tool-meta.ts";

/**
 * The console's one way to the service: `call(toolName, input)`. Requests are placed from the
 * registry's own routes by the CLI's `toolRequest` (path parameters in the path, the rest in
 * the query or the JSON body, as the server reads them), and what a credential may do is
 * decided by the server's own `mayUse`.
 */
export { ApiError };

const byName = new Map<string, ToolRoute>(routes.map((r) => [r.name, r]));

export function route(name: string): ToolRoute {
  const r = byName.get(name);
  if (!r) throw new Error(`No tool named ${name}`);
  return r;
}

export interface Me {
  user: { id: string; email: string | null };
  organization: { id: string; name: string };
  credential: { type: "api_key" | "jwt"; apiKeyId: string | null; accessKeyId: string | null; scopes: Scope[]; bucketId: string | null; expiresAt: string | null };
}

const SESSION_KEY = "media-console.credential";

/** The bearer value, kept in this tab's sessionStorage only (never a cookie): closing the tab signs out. */
export const token = signal<string | null>(sessionStorage.getItem(SESSION_KEY));
export const me = signal<Me | null>(null);
/** Why the last session ended, shown on the sign-in page. */
export const signedOutBecause = signal<string | null>(null);

const credential = computed(() => {
  const m = me.value;
  return m ? { scopes: new Set<Scope>(m.credential.scopes), bucketId: m.credential.bucketId } : null;
});

/** May the signed-in credential use this tool? The server's rule, not a copy of it. */
export function can(name: string): boolean {
  const c = credential.value;
  return c !== null && mayUse(route(name), c);
}

export function whyNot(name: string): string | null {
  const c = credential.value;
  if (!c) return "Not signed in";
  const why = refusal(route(name), c);
  if (why === "scope") return `needs the '${route(name).scope}' scope`;
  if (why === "reach") return "acts on the whole organization, and this key is restricted to one bucket";
  return null;
}

export async function signIn(secret: string): Promise<Me> {
  const value = secret.trim();
  const who = (await send(route("me_get"), {}, value)) as Me;
  sessionStorage.setItem(SESSION_KEY, value);
  token.value = value;
  me.value = who;
  signedOutBecause.value = null;
  return who;
}

export function signOut(reason: string | null = null): void {
  sessionStorage.removeItem(SESSION_KEY);
  token.value = null;
  me.value = null;
  signedOutBecause.value = reason;
}

/** Restores the session of this tab, if it has one. */
export async function resume(): Promise<void> {
  const secret = token.value;
  if (!secret) return;
  try {
    me.value = (await send(route("me_get"), {}, secret)) as Me;
  } catch (err) {
    signOut(err instanceof ApiError && err.status === 401 ? `Your credential is no longer accepted: ${err.message}` : null);
  }
}

export async function call<T = any>(name: string, input: Record<string, unknown> = {}, opts: { signal?: AbortSignal } = {}): Promise<T> {
  const secret = token.value;
  if (!secret) throw new ApiError(401, "unauthorized", "Not signed in");
  try {
    return (await send(route(name), input, secret, opts.signal)) as T;
  } catch (err) {
    // A credential that stops working mid-session (deleted, rotated, expired) ends the session.
    if (err instanceof ApiError && err.status === 401) signOut(`Signed out: ${err.message}`);
    throw err;
  }
}

/** A random id, also where crypto.randomUUID is missing (pages served over plain http to another host). */
export function randomId(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The rate limit is one budget per credential for the whole page. A 429 holds every request
 * until its Retry-After, and thumbnails hold back while a page call waits, so the listing a
 * person is looking at is not starved by the images inside it.
 */
export const rateLimit = { until: 0, callsWaiting: 0 };
/** How long a page call keeps waiting out 429s before it shows the error. */
const RATE_LIMIT_PATIENCE_MS = 120_000;

async function waitOutRateLimit(): Promise<void> {
  rateLimit.callsWaiting++;
  try {
    while (rateLimit.until > Date.now()) await sleep(rateLimit.until - Date.now());
  } finally {
    rateLimit.callsWaiting--;
  }
}

/** The URL and request a tool call becomes over REST (also what the explorer's curl shows). */
export function restRequest(tool: Pick<ToolRoute, "http">, input: Record<string, unknown>): { method: string; url: string; body?: string } {
  const { path, query, body } = toolRequest(tool, input);
  const qs = query && [...query].length > 0 ? `?${query}` : "";
  return { method: tool.http.method, url: `/api${path}${qs}`, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) };
}

async function send(tool: ToolRoute, input: Record<string, unknown>, secret: string, signal?: AbortSignal): Promise<unknown> {
  // A redirect's target cannot be read by a page; over MCP the same tool returns it as data.
  if (tool.redirects) return sendOverMcp(tool, input, secret, signal);
  const req = restRequest(tool, input);
  const headers: Record<string, string> = { authorization: `Bearer ${secret}`, accept: "application/json" };
  if (tool.http.method !== "GET") headers["idempotency-key"] = randomId();
  if (req.body !== undefined) headers["content-type"] = "application/json";
  const started = Date.now();
  for (;;) {
    await waitOutRateLimit();
    let response: Response;
    try {
      response = await fetch(req.url, { method: req.method, headers, body: req.body, signal });
    } catch (err) {
      if ((err as Error).name === "AbortError") throw err;
      throw new ApiError(0, "network_error", "The service did not answer. Check that it is running and that you are online.");
    }
    if (response.ok) return response.status === 204 ? null : response.json();
    const error = await errorOf(response);
    // The rate limit says when to come back; a page waits rather than failing.
    if (response.status === 429 && Date.now() - started < RATE_LIMIT_PATIENCE_MS) {
      rateLimit.until = Math.max(rateLimit.until, Date.now() + retryAfterMs(response));
      continue;
    }
    throw error;
  }
}

export function retryAfterMs(response: Response): number {
  const s = Number(response.headers.get("retry-after"));
  return Number.isFinite(s) && s > 0 ? Math.min(s * 1000, 30_000) : 1000;
}

export async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  try {
    const e = (JSON.parse(text) as { error?: { code?: string; message?: string; details?: unknown; requestId?: string } }).error;
    if (e?.code) return new ApiError(response.status, e.code, e.message ?? e.code, e.details, e.requestId);
  } catch {}
  return new ApiError(response.status, response.status >= 500 ? "internal_error" : "http_error", `HTTP ${response.status}`);
}

async function sendOverMcp(tool: ToolRoute, input: Record<string, unknown>, secret: string, signal?: AbortSignal): Promise<unknown> {
  const response = await fetch("/mcp", {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(mcpCall(tool.name, input)),
    signal,
  });
  if (!response.ok) throw await errorOf(response);
  const message = (await response.json()) as { result?: { isError?: boolean; structuredContent?: unknown; content?: { type: string; text?: string }[] }; error?: { message: string } };
  if (message.error) throw new ApiError(response.status, "mcp_error", message.error.message);
  const result = message.result;
  if (result?.isError) {
    // The first text block is a summary line; the error envelope is the JSON one after it.
    const texts = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text ?? "");
    const text = texts.find((t) => t.startsWith("{")) ?? texts[0] ?? "";
    try {
      const e = (JSON.parse(text) as { error: { code: string; message: string; details?: unknown; requestId?: string } }).error;
      throw new ApiError(400, e.code, e.message, e.details, e.requestId);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError(400, "tool_error", text || "The tool failed");
    }
  }
  return result?.structuredContent;
}

/** The JSON-RPC message of an MCP `tools/call` (also what the explorer shows). */
export function mcpCall(name: string, args: Record<string, unknown>) {
  return { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } };
}

/** A sentence for a person: what went wrong and, where it helps, what to do. */
export function describeError(err: unknown): string {
  if (!(err instanceof ApiError)) return err instanceof Error ? err.message : String(err);
  const details = Array.isArray(err.details)
    ? (err.details as { path?: string; message?: string }[])
        .map((d) => (d.path ? `${d.path}: ${d.message}` : d.message))
        .filter(Boolean)
        .join("; ")
    : "";
  const base = details ? `${err.message} (${details})` : err.message;
  return err.requestId ? `${base} [request ${err.requestId}]` : base;
}
