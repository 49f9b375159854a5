import { bootstrap } from "../domain/access/identity.ts";
import { createHttpApp } from "./http.ts";
import { loadConfig } from "./config.ts";
import { listening } from "./listen.ts";
import { exitIfStartFailure } from "./start-failure.ts";
import { startingListener } from "./starting-listener.ts";
import { lockDataDir } from "../storage/local-s3/dir-lock.ts";
import { createServices, type Services } from "./services.ts";
import { stopOnSignals } from "./shutdown.ts";
import { withoutCredentials } from "./tracing.ts";

/** `npm start`: the REST API, MCP endpoint and docs on one port, on embedded backends unless configured. */
const config = loadConfig();
// The embedded database and storage node keep their files in DATA_DIR: a second server on the
// same directory would open them too, and each would overwrite what the other writes.
if (!config.databaseUrl || !config.s3.endpoint) {
  await lockDataDir(config.dataDir).catch((err) => {
    exitIfStartFailure(err);
    throw err;
  });
}
// Until the services are open (an instance may wait for another's migration), /healthz answers
// on PORT and METRICS_PORT and /readyz says "starting" (app/starting-listener.ts).
const starting = (() => {
  try {
    return {
      main: startingListener({ host: config.host, port: config.port, variable: "PORT", what: "the API" }),
      ops: config.ops.metricsPort ? startingListener({ host: config.host, port: config.ops.metricsPort, variable: "METRICS_PORT", what: "the metrics and probes listener" }) : null,
    };
  } catch (err) {
    exitIfStartFailure(err);
    throw err;
  }
})();
const services: Services = await createServices(config, { beforeOpsListener: async () => void (await starting.ops?.stop()) }).catch(async (err) => {
  await Promise.all([starting.main.stop(), starting.ops?.stop()]);
  exitIfStartFailure(err);
  throw err;
});
const { deps } = services;

const initial = await bootstrap(deps, config.initialAdminKey);
if (initial) {
  const lines = [
    "",
    "  First start: created organization \"Default\" and an admin API key.",
    initial.generated ? `  Secret (shown once, store it now): ${initial.secret}` : "  Secret: the INITIAL_ADMIN_KEY you configured.",
    `  Access key id: ${initial.accessKeyId}`,
    "",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

// PORT=0 took a free port for the starting listener: the API keeps it.
const port = starting.main.port;
await starting.main.stop();
const app = await listening({ variable: "PORT", what: "the API", host: config.host, port, hostVariable: "HOST" }, () =>
  createHttpApp(services).listen({ hostname: config.host, port }),
).catch(async (err) => {
  await services.close();
  // The secret printed above was stored; a start that moves the port will not print it again.
  exitIfStartFailure(err, initial?.generated ? "The admin secret printed above is valid and will not be shown again." : "");
  throw err;
});
const base = config.publicUrl ?? `http://${config.host}:${app.server?.port}`;
deps.log.info("media storage service started", {
  api: `${base}/api`,
  mcp: `${base}/mcp`,
  docs: `${base}/api/docs`,
  openapi: `${base}/api/openapi.json`,
  database: services.backends.database,
  storage: services.backends.storage,
  search: services.backends.search,
  queue: services.backends.queue,
  jobs: services.backends.jobs === "elsewhere" ? "run by npm run worker (WORKER_INLINE=false)" : "run in this process",
  guards: services.backends.guards,
  ...(services.opsPort !== null ? { ops: `http://${config.host}:${services.opsPort}` } : {}),
  tracing: config.ops.tracing ? withoutCredentials(config.ops.tracing.url) : "off",
});

// Bun's stop without closing active connections refuses new ones and resolves once the requests in flight have answered.
stopOnSignals({ services, log: deps.log, what: "server", stopServing: () => app.stop(false) });
