import type { Logger } from "../domain/ports/log.ts";
import type { Services } from "./services.ts";

/**
 * SIGTERM and SIGINT, for `npm start` and `npm run worker`: the process answers not ready at
 * once (load balancers stop sending), stops taking connections, lets the requests in flight
 * finish, then closes its services (the jobs in hand finish; jobs not started stay queued or
 * go back to the outbox), all within SHUTDOWN_TIMEOUT_MS. Past that deadline it exits with
 * status 1 and says so: whatever was still running is run again elsewhere (a request is
 * retried by its client, a job's claim or lock lapses and another instance takes it).
 */
export function stopOnSignals(opts: {
  services: Services;
  log: Logger;
  /** Names the process in its log lines ("worker stopped"). */
  what: "server" | "worker";
  stopServing?: () => Promise<unknown>;
  exit?: (code: number) => void;
}): void {
  const { services, log } = opts;
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const deadlineMs = services.deps.config.ops.shutdownTimeoutMs;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const started = performance.now();
    services.readiness.markStopping();
    log.info(`${opts.what} stopping: finishing requests and jobs in hand`, { signal, deadlineMs });
    const timer = setTimeout(() => {
      log.error("shutdown deadline passed; exiting with work unfinished (it will be retried elsewhere)", { deadlineMs });
      exit(1);
    }, deadlineMs);
    try {
      await opts.stopServing?.();
      log.info("requests drained", { ms: Math.round(performance.now() - started) });
      await services.close();
      log.info(`${opts.what} stopped`, { ms: Math.round(performance.now() - started) });
      clearTimeout(timer);
      exit(0);
    } catch (err) {
      log.error("shutdown failed", { error: String(err) });
      exit(1);
    }
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}
