import { type AnyTool, inputLocation, pathParams } from "../tools/define.ts";
import { VERSION } from "./version.ts";

/** An answer outside 2xx, carrying the REST error envelope (docs/conventions.md#errors). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly requestId?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export type ToolResult =
  | { kind: "json"; status: number; body: unknown }
  /** REST answered with a redirect (media_stream): the target is the result. */
  | { kind: "redirect"; status: number; location: string }
  /** REST answered with bytes (a thumbnail): the caller streams them somewhere. */
  | { kind: "bytes"; status: number; response: Response };

export interface ClientOptions {
  url: string;
  /** The bearer secret; or, with `signing`, none. */
  apiKey: string | null;
  /**
   * Signs each request (a service credential, docs/signed-requests.md) instead of a bearer:
   * returns the headers to add. Passed in, so this file stays free of node:crypto (the web
   * console bundles it for the browser).
   */
  sign?: (request: { method: string; url: string; body?: Uint8Array }) => Record<string, string>;
  /** Attempts for a request that can be repeated safely; default 4. */
  attempts?: number;
  /** Told about each retry (the CLI prints it when it waits long). */
  onRetry?: (info: { attempt: number; waitMs: number; reason: string }) => void;
  fetch?: typeof fetch;
}

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

/**
 * The REST client. Every tool call is one request: path parameters in the path, the rest
 * in the query (GET, DELETE) or the JSON body (POST, PUT), as rest/input.ts reads them.
 * Requests that change state carry an Idempotency-Key (docs/guards.md), so a retry after a
 * lost answer replays the first result instead of doing the work twice.
 */
export class RestClient {
  readonly url: string;
  private readonly apiKey: string | null;
  private readonly attempts: number;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: ClientOptions) {
    this.url = opts.url;
    this.apiKey = opts.apiKey;
    this.attempts = opts.attempts ?? 4;
    this.fetchImpl = opts.fetch ?? fetch;
  }

  /** Headers every request of this client carries: the bearer (unless it signs) and who is asking. */
  headers(): Record<string, string> {
    return { ...(this.opts.sign || !this.apiKey ? {} : { authorization: `Bearer ${this.apiKey}` }), "user-agent": `media-cli/${VERSION}` };
  }

  /** Calls a tool over REST and returns its output, or throws ApiError. */
  async call<T = any>(tool: AnyTool, input: Record<string, unknown>): Promise<T> {
    const result = await this.callRaw(tool, input);
    if (result.kind === "json") return result.body as T;
    if (result.kind === "redirect") return { url: result.location } as T;
    throw new ApiError(result.status, "unexpected_response", `${tool.name} answered with ${result.response.headers.get("content-type") ?? "bytes"}, not JSON`);
  }

  async callRaw(tool: AnyTool, input: Record<string, unknown>): Promise<ToolResult> {
    const { path, query, body } = toolRequest(tool, input);
    const retrySafe = tool.http.method !== "POST" || tool.annotations.idempotentHint || tool.annotations.readOnlyHint;
    const response = await this.send(tool.http.method, path, { query, body, retryServerErrors: retrySafe });
    if (response.status >= 300 && response.status < 400 && response.headers.has("location")) {
      return { kind: "redirect", status: response.status, location: new URL(response.headers.get("location")!, this.url).toString() };
    }
    const type = response.headers.get("content-type") ?? "";
    if (!type.includes("json")) return { kind: "bytes", status: response.status, response };
    return { kind: "json", status: response.status, body: await response.json() };
  }

  /** One request, retried on network errors, 429 and 502-504 (and on 500 when repeating is safe). */
  async send(
    method: string,
    path: string,
    opts: { query?: URLSearchParams; body?: unknown; retryServerErrors?: boolean } = {},
  ): Promise<Response> {
    const url = `${this.url}/api${path}${opts.query && [...opts.query].length > 0 ? `?${opts.query}` : ""}`;
    const headers: Record<string, string> = { ...this.headers(), accept: "application/json" };
    if (method !== "GET") headers["idempotency-key"] = crypto.randomUUID();
    let payload: string | undefined;
    if (opts.body !== undefined) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(opts.body);
    }
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        // Each attempt is signed afresh: the service refuses a signature it has seen before.
        const signature = this.opts.sign?.({ method, url, body: payload === undefined ? undefined : new TextEncoder().encode(payload) }) ?? {};
        response = await this.fetchImpl(url, { method, headers: { ...headers, ...signature }, body: payload, redirect: "manual" });
      } catch (err) {
        if (attempt >= this.attempts) throw new ApiError(0, "network_error", `cannot reach ${this.url}: ${(err as Error).message}`);
        await this.pause(attempt, backoff(attempt), (err as Error).message);
        continue;
      }
      if (response.status < 400 || response.status === 304) return response;
      const error = await errorOf(response);
      const inFlight = error.code === "idempotency_in_flight";
      const retryable = RETRYABLE_STATUS.has(response.status) || inFlight || (response.status === 500 && opts.retryServerErrors);
      if (!retryable || attempt >= this.attempts) throw error;
      const retryAfter = Number(response.headers.get("retry-after"));
      const wait = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter * 1000, 60_000) : backoff(attempt);
      await this.pause(attempt, wait, `${error.code} (${response.status})`);
    }
  }

  private async pause(attempt: number, waitMs: number, reason: string) {
    this.opts.onRetry?.({ attempt, waitMs, reason });
    await Bun.sleep(waitMs);
  }
}

/** Exponential backoff with jitter: ~0.5 s, 1 s, 2 s, 4 s ... capped at 15 s. */
export function backoff(attempt: number, baseMs = 500): number {
  const exp = Math.min(baseMs * 2 ** (attempt - 1), 15_000);
  return Math.round(exp / 2 + Math.random() * (exp / 2));
}

async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  try {
    const e = (JSON.parse(text) as { error?: { code?: string; message?: string; details?: unknown; requestId?: string } }).error;
    if (e?.code) return new ApiError(response.status, e.code, e.message ?? e.code, e.details, e.requestId);
  } catch {}
  const fallback: Record<number, string> = { 400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 409: "conflict", 429: "rate_limited" };
  const code = fallback[response.status] ?? (response.status >= 500 ? "internal_error" : "http_error");
  return new ApiError(response.status, code, `HTTP ${response.status}${text && text.length < 200 ? `: ${text.trim()}` : ""}`);
}

/** Where each input field of a tool travels over REST (the CLI and the web console both send requests this way). */
export function toolRequest(tool: Pick<AnyTool, "http">, input: Record<string, unknown>): { path: string; query?: URLSearchParams; body?: Record<string, unknown> } {
  const names = pathParams(tool.http.path);
  const rest: Record<string, unknown> = { ...input };
  let path = tool.http.path;
  for (const name of names) {
    const value = rest[name];
    if (value === undefined || value === null || value === "") throw new ApiError(400, "validation_error", `Missing ${name}`, [{ path: name, message: "Required" }]);
    path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
    delete rest[name];
  }
  if (inputLocation(tool) === "body") return { path, body: rest };
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(rest)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) query.append(k, typeof item === "object" ? JSON.stringify(item) : String(item));
    else query.set(k, v !== null && typeof v === "object" ? JSON.stringify(v) : String(v));
  }
  return { path, query };
}
