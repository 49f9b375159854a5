import { readdirSync } from "node:fs";
import { setPriority } from "node:os";
import { loadConfig } from "../app/config.ts";
import { createLogger } from "../app/log.ts";
import { keepRunningThroughPeerResets } from "../app/socket-resets.ts";
import { lowerOwnAutogroup } from "./derivatives/nice-command.ts";

/**
 * `npm run worker`: runs background jobs from the BullMQ queue (REDIS_URL), with the same
 * database and storage settings as the server. Start as many as you like, on any machines.
 * SIGTERM finishes the jobs in hand before exiting (within SHUTDOWN_TIMEOUT_MS); a killed
 * worker's jobs are taken over by the others once their lock expires (WORKER_LOCK_MS).
 * With METRICS_PORT it serves /metrics, /healthz and /readyz there.
 *
 * The whole process runs at niceness WORKER_NICE: its jobs are background work, and on a host
 * shared with the API (or PostgreSQL, or the storage node) they should take the CPU those leave.
 * Set here, before the rest is loaded, for every thread the runtime has started so far, so every
 * thread started later (libvips', the database driver's) inherits it. Started in a session of its
 * own (a service manager, a container's first process, `setsid`), it lowers that session's
 * autogroup as well: Linux shares the CPU between sessions before niceness counts.
 */
const config = loadConfig();
keepRunningThroughPeerResets(createLogger(config.logLevel));
if (config.worker.nice > 0) {
  lowerPriority(config.worker.nice);
  lowerOwnAutogroup();
}

/**
 * Lowers every thread of this process to `nice`. Threads started later inherit their creator's
 * priority; the runtime has already started a few (its pool, the JIT's), so on Linux each is
 * set by its id, where a priority is a thread's own.
 */
function lowerPriority(nice: number): void {
  let tids: number[] = [0];
  try {
    tids = readdirSync("/proc/self/task").map(Number);
  } catch {
    // Not Linux: the process's priority is all there is.
  }
  for (const tid of tids) {
    try {
      setPriority(tid, nice);
    } catch {
      // A thread that ended meanwhile, or a system that will not: run as is.
    }
  }
}
const { createServices } = await import("../app/services.ts");
const { stopOnSignals } = await import("../app/shutdown.ts");
const services = await createServices(config, { role: "worker" }).catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
const { deps } = services;
deps.log.info("worker started", {
  queues: [`${config.redisPrefix}:jobs-cpu`, `${config.redisPrefix}:jobs-io`, `${config.redisPrefix}:jobs (legacy)`],
  concurrency: { cpu: config.worker.concurrency, io: config.worker.ioConcurrency },
  nice: config.worker.nice,
  database: services.backends.database,
  storage: services.backends.storage,
  ...(services.opsPort !== null ? { ops: `http://${config.host}:${services.opsPort}` } : {}),
});

stopOnSignals({ services, log: deps.log, what: "worker" });
