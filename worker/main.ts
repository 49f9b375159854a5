import { loadConfig } from "../app/config.ts";
import { createServices } from "../app/services.ts";
import { stopOnSignals } from "../app/shutdown.ts";

/**
 * `npm run worker`: runs background jobs from the BullMQ queue (REDIS_URL), with the same
 * database and storage settings as the server. Start as many as you like, on any machines.
 * SIGTERM finishes the jobs in hand before exiting (within SHUTDOWN_TIMEOUT_MS); a killed
 * worker's jobs are taken over by the others once their lock expires (WORKER_LOCK_MS).
 * With METRICS_PORT it serves /metrics, /healthz and /readyz there.
 */
const config = loadConfig();
const services = await createServices(config, { role: "worker" }).catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
const { deps } = services;
deps.log.info("worker started", {
  queue: `${config.redisPrefix}:jobs`,
  concurrency: config.worker.concurrency,
  database: services.backends.database,
  storage: services.backends.storage,
  ...(services.opsPort !== null ? { ops: `http://${config.host}:${services.opsPort}` } : {}),
});

stopOnSignals({ services, log: deps.log, what: "worker" });
