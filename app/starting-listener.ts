import { explainListenError } from "./listen.ts";

/**
 * What answers on a port while the process starts (it may wait minutes for another instance's
 * migration): /healthz says the process is alive, so a liveness probe does not restart it in
 * the middle of its wait, /readyz and everything else say 503 "starting". The real listener
 * takes the port once the services are open. Taking the port first also tells a busy PORT at
 * once, before the database is opened.
 */
export interface StartingListener {
  port: number;
  stop(): Promise<void>;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers } });

export function startingListener(opts: { host: string; port: number; variable: string; what: string }): StartingListener {
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: opts.host,
      port: opts.port,
      fetch(request) {
        const path = new URL(request.url).pathname;
        if (path === "/healthz") return json(200, { status: "ok" });
        if (path === "/readyz") return json(503, { status: "starting" });
        return json(503, { error: { code: "unavailable", message: "The service is starting; try again shortly." } }, { "retry-after": "5" });
      },
    });
  } catch (err) {
    throw explainListenError(err, { variable: opts.variable, what: opts.what, host: opts.host, port: opts.port, hostVariable: "HOST" });
  }
  return { port: server.port!, stop: async () => void (await server.stop(true)) };
}
