import { getPriority } from "node:os";

const NICE = Bun.which("nice");

/**
 * The command that runs `args` at niceness `nice`. `nice -n` adds to the caller's own
 * niceness, and a worker process already runs at WORKER_NICE (worker/main.ts): its children
 * would land at twice that (capped at 19), below even the background work they should share
 * the machine with. So only the difference is added, and nothing when the caller is already
 * there. Without `nice` on the PATH the child runs at the caller's priority.
 */
export function nicedCommand(nice: number, args: string[]): string[] {
  const step = nice - getPriority();
  return NICE && step > 0 ? [NICE, "-n", String(step), ...args] : args;
}
