import { bootstrap } from "../domain/access/identity.ts";
import { createHttpApp } from "./http.ts";
import { loadConfig } from "./config.ts";
import { listening } from "./listen.ts";
import { exitIfStartFailure } from "./start-failure.ts";
import { type StartingListener, startingListener } from "./starting-listener.ts";
import { lockDataDir } from "../storage/local-s3/dir-lock.ts";
import { createServices, type Services } from "./services.ts";
import { stopOnSignals } from "./shutdown.ts";
import { withoutCredentials } from "./tracing.ts";
import { createLogger } from "./log.ts";
import { keepRunningThroughPeerResets } from "./socket-resets.ts";

/** `npm start`: the REST API, MCP endpoint and docs on one port, on embedded backends unless configured. */
const config = loadConfig();
keepRunningThroughPeerResets(createLogger(config.logLevel));
// The embedded database and storage node keep their files in DATA_DIR: a second server on the
// same directory would open them too, and each would overwrite what the other writes.
if (!config.databaseUrl || !config.s3.endpoint) {
  await lockDataDir(config.dataDir).catch((err) => {
    exitIfStartFailure(err);
    throw err;
  });
}
// While this instance waits for another's migration, /healthz answers on PORT and METRICS_PORT
// (a liveness probe must not restart it mid-wait) and /readyz says "starting".
let starting: { main: StartingListener | null; ops: StartingListener | null } = { main: null, ops: null };
const stopStarting = async () => {
  await Promise.all([starting.main?.stop(), starting.ops?.stop()]);
  starting = { main: null, ops: null };
};
const whileWaiting = () => {
  try {
    starting.main = startingListener({ host: config.host, port: config.port, variable: "PORT", what: "the API" });
    if (config.ops.metricsPort) starting.ops = startingListener({ host: config.host, port: config.ops.metricsPort, variable: "METRICS_PORT", what: "the metrics and probes listener" });
  } catch {
    // A port that cannot be taken: the listener proper says so in one line once the services are open.
  }
};
const services: Services = await createServices(config, {
  onMigrationWait: whileWaiting,
  beforeOpsListener: async () => {
    await starting.ops?.stop();
    starting.ops = null;
  },
}).catch(async (err) => {
  await stopStarting();
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
const port = starting.main?.port ?? config.port;
await stopStarting();
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
