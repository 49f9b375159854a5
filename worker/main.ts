import { loadConfig } from "../app/config.ts";
import { createServices } from "../app/services.ts";
import { stopOnSignal } from "../app/signals.ts";

/**
 * `npm run worker`: runs background jobs from the BullMQ queue (REDIS_URL), with the same
 * database and storage settings as the server. Start as many as you like, on any machines.
 * SIGTERM finishes the jobs in hand before exiting; a killed worker's jobs are taken over by
 * the others once their lock expires (WORKER_LOCK_MS).
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
});

stopOnSignal(async (signal) => {
  deps.log.info("worker stopping: finishing the jobs in hand", { signal });
  await services.close();
  deps.log.info("worker stopped");
});
