import type { ApiCallMeter } from "../domain/usage/meter.ts";
import { callerOf, type Middleware } from "./pipeline.ts";

/**
 * Counts every authenticated REST tool call and MCP request towards the organization's
 * apiCallsThisMonth, whatever its outcome, in memory (no database write per request).
 * Goes right after authentication, in both `guards` and `mcpGuards`.
 */
export function meterApiCalls(meter: ApiCallMeter): Middleware {
  return (ctx, next) => {
    meter.record(callerOf(ctx).orgId);
    return next();
  };
}
