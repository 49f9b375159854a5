import type { Elysia } from "elysia";
import { createApp } from "../http/server.ts";
import { createGuards } from "../http/guards/index.ts";
import { meterApiCalls } from "../http/metering.ts";
import { paymentWebhook } from "../rest/webhook.ts";
import { readinessResponse } from "./health.ts";
import { requestObserver } from "./observe.ts";
import { tokenMetrics } from "./ops-server.ts";
import type { Services } from "./services.ts";

/**
 * The HTTP server as `npm start` runs it, and as every test server runs it: the registry's
 * routes behind authentication, metering, rate limit and idempotency, plus the payment webhook.
 * Metering comes first after authentication, so refused calls (429) still count as calls.
 * Also /readyz, and /metrics behind METRICS_TOKEN (docs/operations.md).
 */
export function createHttpApp(services: Services, opts: { extraRoutes?: (app: Elysia) => void } = {}) {
  const { deps } = services;
  const guards = createGuards(deps, services.guardStores);
  const metering = meterApiCalls(services.apiCalls);
  const webhook = paymentWebhook(deps);
  return createApp({
    deps,
    preAuthGuards: guards.preAuthGuards,
    guards: [metering, ...guards.guards],
    mcpGuards: [metering, ...guards.mcpGuards],
    publicGuards: guards.publicGuards,
    thumbnailGuards: guards.thumbnailGuards,
    observe: requestObserver(services.metrics),
    replay: services.guardStores.replay,
    extraRoutes: (app) => {
      webhook(app);
      // Probes and metrics are not API calls: no guard, never limited, never counted.
      app.get("/readyz", async () => readinessResponse(await services.readiness.check()));
      app.get("/metrics", ({ request }) => tokenMetrics(services, deps.config.ops.metricsToken, request));
      opts.extraRoutes?.(app);
    },
  });
}
