import type { Caller } from "../domain/access/caller.ts";

/** One HTTP request on its way through the guards to a tool. */
export interface HttpContext {
  request: Request;
  url: URL;
  requestId: string;
  /** Set by authentication; every later step may rely on it. */
  caller: Caller | null;
  clientAddress: string | null;
  /** Added to whatever response the request ends with, errors included (X-Request-Id, RateLimit). */
  responseHeaders: Headers;
  /**
   * Lets this request stay silent for up to `seconds` (a call that waits on purpose): the
   * server otherwise closes a connection idle for 30 seconds, and the waiting client with it.
   */
  holdOpen?: (seconds: number) => void;
}

/** Which route a request took: the tool of a REST route, or /mcp, or a route without a tool. */
export interface RouteInfo {
  kind: "tool" | "mcp" | "public";
  /** The REST tool's name; null for /mcp (the tool, if any, is known once it runs) and public routes. */
  tool: string | null;
  /** The route as declared, for span names: "GET /api/buckets/:id". */
  template: string;
}

/**
 * Sees every request the pipeline serves (metrics, traces): it runs `handle`, which never
 * throws (errors are already answers), and returns its response.
 */
export type RequestObserver = (ctx: HttpContext, route: RouteInfo, handle: () => Promise<Response>) => Promise<Response>;

export type Middleware = (ctx: HttpContext, next: () => Promise<Response>) => Promise<Response>;

/** Runs the steps in order, each deciding whether and how to call the next. */
export function compose(steps: readonly Middleware[], last: (ctx: HttpContext) => Promise<Response>) {
  return (ctx: HttpContext): Promise<Response> => {
    const run = (i: number): Promise<Response> => (i < steps.length ? steps[i]!(ctx, () => run(i + 1)) : last(ctx));
    return run(0);
  };
}

export function callerOf(ctx: HttpContext): Caller {
  if (!ctx.caller) throw new Error("pipeline order: caller read before authentication");
  return ctx.caller;
}
