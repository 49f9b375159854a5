import type { Config } from "../domain/core/config.ts";
import { errors } from "../domain/core/errors.ts";
import type { Middleware } from "./pipeline.ts";

/**
 * DNS-rebinding protection for /mcp, as the MCP transport spec asks of servers: a web page
 * whose name was re-pointed at this server's address reaches it with its own name in `Host`
 * and `Origin`, so both must name this server. Entries without a port match any port (a local
 * server's port changes; the name is what a rebinding cannot fake). `Origin` may also be one of
 * CORS_ORIGINS, the browser applications the operator let in.
 */
export function hostCheck(config: Pick<Config, "mcpAllowedHosts" | "corsOrigins">): Middleware {
  const allowed = config.mcpAllowedHosts;
  const hostAllowed = (host: string): boolean => {
    if (allowed === "*") return true;
    const h = host.toLowerCase();
    const name = h.startsWith("[") ? h.slice(0, h.indexOf("]") + 1) : h.split(":")[0]!;
    return allowed.includes(h) || allowed.includes(name);
  };
  const originAllowed = (origin: string, host: string): boolean => {
    const cors = config.corsOrigins;
    if (cors === "*" || cors.includes(origin)) return true;
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return false;
    }
    return allowed === "*" ? originHost.toLowerCase() === host.toLowerCase() : hostAllowed(originHost);
  };
  return async (ctx, next) => {
    const host = ctx.request.headers.get("host") ?? ctx.url.host;
    if (!hostAllowed(host)) throw errors.forbidden(`Host ${host} is not a name of this server (MCP_ALLOWED_HOSTS)`);
    const origin = ctx.request.headers.get("origin");
    if (origin && origin !== "null" && !originAllowed(origin, host)) {
      throw errors.forbidden(`Origin ${origin} may not call /mcp (MCP_ALLOWED_HOSTS, CORS_ORIGINS)`);
    }
    return next();
  };
}
