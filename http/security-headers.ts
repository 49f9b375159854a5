import type { Config } from "../app/config.ts";
import { AppError } from "../domain/core/errors.ts";
import { errorResponse } from "./respond.ts";

/**
 * Headers every answer carries, and the API's CORS policy (CORS_ORIGINS).
 *
 * The API speaks JSON to programs, so its pages may never be framed, sniffed into another
 * type, or cached by a shared cache: answers hold presigned URLs and, once, key secrets.
 * Handlers that know better (the docs bundle is cacheable) set their own value; these are
 * defaults only, because Elysia lets a Response's own headers win over `set.headers`.
 */
const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'";

// The docs page loads Scalar from /api/docs/scalar.js and talks to this server only; the one
// inline script is allowed by its hash (docs.ts) rather than by 'unsafe-inline'. Scalar's
// bundle compiles templates and schema examples with `new Function`, so this page alone needs
// 'unsafe-eval' (scalar/scalar#10022 and downstream CSP fixes); it shows no user data.
export function docsCsp(inlineScriptHash: string): string {
  return [
    "default-src 'self'",
    `script-src 'self' '${inlineScriptHash}' 'unsafe-eval'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** What a browser may send cross-origin: the credential, JSON, idempotency and MCP session headers. */
const ALLOWED_HEADERS = "authorization, content-type, idempotency-key, mcp-protocol-version, mcp-session-id, last-event-id, x-mcp-toolsets, x-mcp-readonly";
const ALLOWED_METHODS = "GET, POST, PUT, PATCH, DELETE";
/** What a browser script may read: the request id for support, the limiter's advice, replay marks. */
const EXPOSED_HEADERS = "x-request-id, ratelimit, ratelimit-policy, retry-after, idempotency-replayed, mcp-session-id, www-authenticate";

export interface SecurityPolicy {
  /** Default headers for the answer to this request. */
  headersFor(request: Request, path: string): Record<string, string>;
  /** A CORS preflight's answer, or null when the request is not a preflight for an API path. */
  preflight(request: Request, path: string): Response | null;
}

const isApiPath = (path: string) => path === "/mcp" || path.startsWith("/api/");

export function securityPolicy(config: Pick<Config, "corsOrigins" | "publicUrl">): SecurityPolicy {
  const base: Record<string, string> = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "content-security-policy": API_CSP,
  };
  // HSTS only means something over TLS, which the service sees through its public address.
  if (config.publicUrl?.startsWith("https://")) base["strict-transport-security"] = "max-age=31536000; includeSubDomains";

  const origins = config.corsOrigins;
  const allowedOrigin = (origin: string | null): string | null => {
    if (!origin) return null;
    if (origins === "*") return "*";
    return origins.includes(origin) ? origin : null;
  };

  return {
    headersFor(request, path) {
      const headers = { ...base };
      if (!isApiPath(path) || path === "/api/payments/webhook") return headers;
      const allowed = allowedOrigin(request.headers.get("origin"));
      // The answer depends on Origin whenever specific origins are listed, so caches must key on it.
      if (origins !== "*" && origins.length > 0) headers.vary = "origin";
      if (allowed) {
        headers["access-control-allow-origin"] = allowed;
        headers["access-control-expose-headers"] = EXPOSED_HEADERS;
      }
      return headers;
    },
    preflight(request, path) {
      if (request.method !== "OPTIONS" || !request.headers.get("access-control-request-method")) return null;
      if (!isApiPath(path) || path === "/api/payments/webhook") return null;
      const origin = request.headers.get("origin");
      const allowed = allowedOrigin(origin);
      if (!allowed) {
        const message =
          origins === "*" || origins.length > 0
            ? `Origin ${origin ?? "(none)"} is not in CORS_ORIGINS`
            : "Cross-origin requests are not enabled on this server (CORS_ORIGINS is unset)";
        return errorResponse(new AppError("forbidden", message), crypto.randomUUID(), { ...base, vary: "origin" });
      }
      // No credentials mode: the API authenticates with a bearer header, never with cookies.
      return new Response(null, {
        status: 204,
        headers: {
          ...base,
          ...(origins === "*" ? {} : { vary: "origin" }),
          "access-control-allow-origin": allowed,
          "access-control-allow-methods": ALLOWED_METHODS,
          "access-control-allow-headers": ALLOWED_HEADERS,
          "access-control-max-age": "600",
        },
      });
    },
  };
}
