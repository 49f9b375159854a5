import { getPriority } from "node:os";

const NICE = Bun.which("nice");
const CHRT = Bun.which("chrt");

/** How picture work is scheduled beside requests: its niceness, and whether it runs in Linux's idle class. */
export interface Priority {
  nice: number;
  /**
   * SCHED_IDLE (`chrt --idle`): the child gets a core only when nothing of normal priority
   * wants it. Niceness alone still gives a niced decoder about a tenth of a busy core, and
   * with several libvips threads that was enough to multiply another organization's p99
   * (bench/RESULTS.md, neighbours notes); in the idle class it was about halved again.
   */
  idle: boolean;
}

/**
 * The command that runs `args` at `priority`. `nice -n` adds to the caller's own niceness, and
 * a worker process already runs at WORKER_NICE (worker/main.ts): its children would land at
 * twice that (capped at 19). So only the difference is added, and nothing when the caller is
 * already there. Without `nice` (or `chrt`) on the PATH that part is left out.
 */
export function nicedCommand(priority: Priority, args: string[]): string[] {
  const step = priority.nice - getPriority();
  const niced = NICE && step > 0 ? [NICE, "-n", String(step), ...args] : args;
  return CHRT && priority.idle && priority.nice > 0 ? [CHRT, "--idle", "0", ...niced] : niced;
}
