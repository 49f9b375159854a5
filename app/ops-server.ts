import { timingSafeEqual } from "node:crypto";
import { livenessResponse, type ReadinessProbe, readinessResponse } from "./health.ts";
import { explainListenError } from "./listen.ts";
import type { Metrics } from "./metrics.ts";

/**
 * /metrics, /healthz and /readyz. On the main port /metrics needs METRICS_TOKEN as a bearer
 * token (and is absent without one); on METRICS_PORT, a listener meant for a private network
 * or the pod's own probes, all three answer without credentials. The worker process has only
 * the METRICS_PORT listener.
 */

export interface Ops {
  metrics: Metrics;
  readiness: ReadinessProbe;
}

export async function metricsResponse(metrics: Metrics): Promise<Response> {
  return new Response(await metrics.text(), { headers: { "content-type": metrics.contentType, "cache-control": "no-store" } });
}

function tokenMatches(header: string | null, token: string): boolean {
  const given = Buffer.from(header?.startsWith("Bearer ") ? header.slice(7) : "");
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** /metrics on the main port: 404 without a configured token (nothing to find), 401 with a wrong one. */
export async function tokenMetrics(ops: Ops, token: string | null, request: Request): Promise<Response> {
  if (!token) return json(404, { error: { code: "not_found", message: "No route for GET /metrics" } });
  if (!tokenMatches(request.headers.get("authorization"), token)) {
    return json(401, { error: { code: "unauthorized", message: "/metrics needs the METRICS_TOKEN bearer token" } }, { "www-authenticate": 'Bearer realm="metrics"' });
  }
  return metricsResponse(ops.metrics);
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", ...headers } });
}

/** The credential-free listener on METRICS_PORT. */
export function startOpsServer(ops: Ops, opts: { host: string; port: number }): { port: number; stop(): Promise<void> } {
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: opts.host,
      port: opts.port,
      async fetch(request) {
        const path = new URL(request.url).pathname;
        if (request.method !== "GET" && request.method !== "HEAD") return json(405, { error: { code: "method_not_allowed", message: "GET only" } }, { allow: "GET, HEAD" });
        if (path === "/metrics") return metricsResponse(ops.metrics);
        if (path === "/healthz") return livenessResponse();
        if (path === "/readyz") return readinessResponse(await ops.readiness.check());
        return json(404, { error: { code: "not_found", message: `No route for GET ${path}` } });
      },
    });
  } catch (err) {
    throw explainListenError(err, { variable: "METRICS_PORT", what: "the metrics and probes listener", host: opts.host, port: opts.port, hostVariable: "HOST" });
  }
  return { port: server.port!, stop: async () => void (await server.stop(true)) };
}
