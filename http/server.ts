import { Elysia } from "elysia";
import type { Deps } from "../domain/core/deps.ts";
import { AppError } from "../domain/core/errors.ts";
import { mcpOverHttp } from "../mcp/http.ts";
import { toAppError } from "../tools/failure.ts";
import { registry } from "../tools/registry.ts";
import type { ReplayStore } from "../domain/ports/replay.ts";
import { authentication } from "./auth.ts";
import { hostCheck } from "./host-check.ts";
import { challengeOnUnauthorized, PRM_PATH, protectedResourceMetadata } from "./protected-resource.ts";
import { oauthRoutes } from "./oauth-routes.ts";
import { MemoryReplayStore } from "./guards/stores/memory.ts";
import { docsPage, docsScript } from "../openapi/docs-page.ts";
import { consoleRoutes } from "../console/serve.ts";
import { allowedMethods } from "./allowed-methods.ts";
import { errorResponse, json } from "./respond.ts";
import { openApiDocument, withServer } from "../openapi/document.ts";
import { compose, type HttpContext, type Middleware, type RequestObserver, type RouteInfo } from "./pipeline.ts";
import { signedRender } from "./render.ts";
import { signedThumbnail } from "./thumbnail.ts";
import { securityPolicy } from "./security-headers.ts";

/** Request line plus headers the service takes; Bun's own default (16 KiB) is raised above it. */
export const MAX_REQUEST_HEAD_BYTES = 16 * 1024;
import { routerPath, runToolOverHttp } from "../rest/routes.ts";

export interface AppOptions {
  deps: Deps;
  /** Guards that run after authentication and before the tool, in order (rate limit, idempotency). */
  guards?: Middleware[];
  /** Guards for /mcp (idempotency keys do not apply to JSON-RPC). */
  mcpGuards?: Middleware[];
  /**
   * Guards that run before authentication and wrap it, on tool routes and /mcp, so they see
   * the requests it refuses (the per-address rate limit for bad credentials).
   */
  preAuthGuards?: Middleware[];
  /** Guards for the routes that take no credential: OpenAPI document, docs, unknown /api paths. */
  publicGuards?: Middleware[];
  /** Guards for signed thumbnail paths (an allowance of their own); publicGuards when not given. */
  thumbnailGuards?: Middleware[];
  /** Routes that are not tools (the payment webhook); they handle their own authentication and pass through no guard. */
  extraRoutes?: (app: Elysia) => void;
  /** Wraps the handling of every tool, /mcp and public route request (metrics, traces). */
  observe?: RequestObserver;
  /** Accepted request signatures (shared through Redis when there is one); in memory otherwise. */
  replay?: ReplayStore;
}

type Handler = (ctx: HttpContext) => Promise<Response>;

/** The path of an absolute request URL, without parsing the whole URL on every request. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const end = url.search(/[?#]/);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}

/** What serving a request needs of Bun's server: the client's address, and a longer idle timeout for a waiting call. */
type BunServer = { requestIP(r: Request): { address: string } | null; timeout?: (r: Request, seconds: number) => void };

/** Elysia's headers for the answer (the security defaults onRequest put there). */
type ElysiaSet = { headers: Record<string, unknown> };

/**
 * The HTTP server: every registry tool at its /api route, MCP at /mcp, the OpenAPI
 * document and docs UI. Elysia routes; the tool pipeline does the rest, so REST and MCP
 * share authentication and guards.
 */
export function createApp(opts: AppOptions) {
  const { deps } = opts;
  const auth = authentication(deps, opts.replay ?? new MemoryReplayStore());
  const preAuth = opts.preAuthGuards ?? [];
  const challenge = challengeOnUnauthorized(deps.config);
  const toolSteps = [...preAuth, challenge, auth, ...(opts.guards ?? [])];
  // The host check comes first: a rebound page learns nothing, not even whether a key works.
  const mcpSteps = [hostCheck(deps.config), ...preAuth, challenge, auth, ...(opts.mcpGuards ?? opts.guards ?? [])];

  const observe: RequestObserver = opts.observe ?? ((_ctx, _route, handle) => handle());
  const serve = async (request: Request, server: BunServer | null, set: ElysiaSet, handler: Handler, route: RouteInfo): Promise<Response> => {
    const started = performance.now();
    const ctx: HttpContext = {
      request,
      url: new URL(request.url),
      requestId: crypto.randomUUID(),
      caller: null,
      clientAddress: server?.requestIP(request)?.address ?? null,
      responseHeaders: new Headers(),
      ...(server?.timeout ? { holdOpen: (seconds: number) => server.timeout!(request, seconds) } : {}),
    };
    const response = await observe(ctx, route, async () => {
      let response: Response;
      try {
        response = await handler(ctx);
      } catch (err) {
        response = errorResponse(toAppError(err, deps.log, ctx.requestId), ctx.requestId);
      }
      ctx.responseHeaders.set("x-request-id", ctx.requestId);
      for (const [k, v] of ctx.responseHeaders) response.headers.set(k, v);
      return response;
    });
    // The access log names the caller by key or user id and the path without its query:
    // never the Authorization header, never a query string (which could carry a token).
    deps.log.debug("request", {
      requestId: ctx.requestId,
      method: request.method,
      path: ctx.url.pathname,
      status: response.status,
      principal: ctx.caller?.principal ?? null,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
    // The defaults go into the answer here (its own headers win, as Elysia would have it), and
    // Elysia's are emptied: with any left, Elysia copies every answer into a new one whose body
    // is a stream of the old (adapter/utils.mjs createResponseHandler), which cost a listing's
    // 60 KB answer a tenth of its CPU; an answer it is handed with none is sent as it is.
    for (const [k, v] of Object.entries(set.headers)) {
      if (!response.headers.has(k)) response.headers.set(k, String(v));
      delete set.headers[k];
    }
    return response;
  };

  /**
   * Bun answers a request head over its limit with a bare 431; the runtime's limit is raised
   * (--max-http-header-size in package.json, Dockerfile and test/run.ts) so that this one,
   * lower, answers first with the error envelope like every other refusal.
   */
  const headTooLarge = (request: Request): Response | null => {
    let size = request.url.length;
    if (size <= MAX_REQUEST_HEAD_BYTES) request.headers.forEach((v, k) => (size += k.length + v.length + 4));
    if (size <= MAX_REQUEST_HEAD_BYTES) return null;
    const err = new AppError("request_header_fields_too_large", `The request line and headers are over ${MAX_REQUEST_HEAD_BYTES / 1024} KiB`);
    const requestId = crypto.randomUUID();
    return errorResponse(err, requestId, { ...security.headersFor(request, pathOf(request.url)), "x-request-id": requestId });
  };
  const app = new Elysia({ serve: { maxRequestBodySize: Math.max(deps.config.maxBodyBytes * 4, 8 * 1024 * 1024) } });
  // Security headers and CORS apply to every answer, errors and unknown routes included, so
  // they are set before routing; a CORS preflight is answered here and reaches no route.
  const security = securityPolicy(deps.config);
  app.onRequest(({ request, set }) => {
    const path = pathOf(request.url);
    Object.assign(set.headers, security.headersFor(request, path));
    const oversized = headTooLarge(request);
    if (oversized) return oversized;
    return security.preflight(request, path) ?? undefined;
  });

  for (const tool of registry) {
    const path = routerPath(tool.http.path);
    const route: RouteInfo = { kind: "tool", tool: tool.name, template: `${tool.http.method} ${path}` };
    app.route(
      tool.http.method,
      path,
      ({ request, params, server, set }) =>
        serve(request, server, set, compose(toolSteps, runToolOverHttp(tool, deps, params as Record<string, string>)), route),
      { parse: "none" },
    );
  }

  const mcp = compose(mcpSteps, mcpOverHttp(deps));
  const mcpRoute: RouteInfo = { kind: "mcp", tool: null, template: "POST /mcp" };
  app.all("/mcp", ({ request, server, set }) => serve(request, server, set, mcp, mcpRoute), { parse: "none" });

  const publicRoute = (template: string, handler: Handler, guards = opts.publicGuards) => {
    const run = compose(guards ?? [], handler);
    const route: RouteInfo = { kind: "public", tool: null, template };
    return ({ request, server, set }: { request: Request; server: BunServer | null; set: ElysiaSet }) => serve(request, server, set, run, route);
  };
  // Built once; its `servers` entry is PUBLIC_URL, else the origin this request came to, so
  // the docs page's samples and generated clients point at this service either way.
  let openapi: Record<string, unknown> | undefined;
  app.get(
    "/api/openapi.json",
    publicRoute("GET /api/openapi.json", async (ctx) => json(200, withServer((openapi ??= openApiDocument(registry)), deps.config.publicUrl ?? ctx.url.origin))),
  );
  // RFC 9728 metadata: the /mcp resource's (where a 401 from /mcp points) and the API's.
  app.get(`${PRM_PATH}/mcp`, publicRoute(`GET ${PRM_PATH}/mcp`, async (ctx) => json(200, protectedResourceMetadata(deps.config, ctx.url, "/mcp"))));
  app.get(PRM_PATH, publicRoute(`GET ${PRM_PATH}`, async (ctx) => json(200, protectedResourceMetadata(deps.config, ctx.url, ""))));
  // This service as the OAuth authorization server those documents name (MCP hosts that only speak OAuth).
  for (const r of oauthRoutes(deps)) app.route(r.method, r.path, publicRoute(`${r.method} ${r.path}`, r.handler), { parse: "none" });
  app.get("/api/docs", publicRoute("GET /api/docs", async () => docsPage()));
  app.get("/api/docs/scalar.js", publicRoute("GET /api/docs/scalar.js", async () => docsScript()));
  // The web console: `/` points there; every /console path but its assets is the one page.
  const site = consoleRoutes(deps);
  app.get("/", () => new Response(null, { status: 302, headers: { location: "/console" } }));
  app.get("/console", publicRoute("GET /console", () => site.page()));
  app.get(
    "/console/*",
    publicRoute("GET /console/*", async (ctx) => {
      const asset = /^\/console\/assets\/([\w.-]+)$/.exec(ctx.url.pathname);
      if (!asset) return site.page();
      const response = await site.asset(ctx.request, asset[1]!);
      if (!response) throw new AppError("not_found", `No console asset ${asset[1]}`);
      return response;
    }),
  );
  // Signed render URLs carry their permission in the query: no credential, beside the tools.
  app.get("/api/render/:id", publicRoute("GET /api/render/:id", signedRender(deps)));
  app.get("/api/thumbnails/:id", publicRoute("GET /api/thumbnails/:id", signedThumbnail(deps), opts.thumbnailGuards ?? opts.publicGuards));
  // Unknown /api paths are answered here rather than by onError, so they are counted and carry
  // the RateLimit fields like every other API answer. Router precedence keeps real routes first.
  // A path that exists under other methods is 405 with the methods it takes.
  const methodsOf = allowedMethods(() => app.routes);
  /** 405 with `Allow` when the path takes other methods, else 404. */
  const noRoute = (method: string, path: string): { err: AppError; allow: string | null } => {
    const allow = methodsOf(path);
    if (allow.length === 0) return { err: new AppError("not_found", `No route for ${method} ${path}`), allow: null };
    return { err: new AppError("method_not_allowed", `${path} takes ${allow.join(", ")}, not ${method}`), allow: allow.join(", ") };
  };
  app.all(
    "/api/*",
    publicRoute("* /api/*", async (ctx) => {
      const { err, allow } = noRoute(ctx.request.method, ctx.url.pathname);
      if (allow) ctx.responseHeaders.set("allow", allow);
      throw err;
    }),
    { parse: "none" },
  );
  // Health checks are not API calls: never limited, so a probe cannot be refused.
  app.get("/healthz", () => json(200, { status: "ok" }));

  opts.extraRoutes?.(app as unknown as Elysia);

  // What no route took: outside /api, a path that exists under other methods (TRACE /healthz,
  // OPTIONS /console) is 405 with `Allow` like an /api path, not a 404.
  app.onError(({ code, request }) => {
    const requestId = crypto.randomUUID();
    if (code === "NOT_FOUND") {
      const { err, allow } = noRoute(request.method, new URL(request.url).pathname);
      return errorResponse(err, requestId, { "x-request-id": requestId, ...(allow ? { allow } : {}) });
    }
    const err = toAppError(code === "PARSE" ? new AppError("bad_request", "Malformed request body") : new Error(String(code)), deps.log, requestId);
    return errorResponse(err, requestId, { "x-request-id": requestId });
  });

  return app;
}
