import { readFileSync, writeFileSync } from "node:fs";
import { getPriority } from "node:os";

const NICE = Bun.which("nice");
const CHRT = Bun.which("chrt");
const SETSID = process.platform === "linux" ? Bun.which("setsid") : null;

/** How picture work is scheduled beside requests: its niceness, and whether it runs in Linux's idle class. */
export interface Priority {
  nice: number;
  /**
   * SCHED_IDLE (`chrt --idle`): the child gets a core only when nothing of normal priority
   * wants it. Niceness alone still gives a niced decoder about a tenth of a busy core, and
   * with several libvips threads that was enough to multiply another organization's p99
   * (bench/notes/2026-11-27-neighbours-sittings.md); in the idle class it was about halved again.
   */
  idle: boolean;
}

/**
 * The command that runs `args` at `priority`. `nice -n` adds to the caller's own niceness, and
 * a worker process already runs at WORKER_NICE (worker/main.ts): its children would land at
 * twice that (capped at 19). So only the difference is added, and nothing when the caller is
 * already there. Without `nice` (or `chrt`) on the PATH that part is left out.
 *
 * A lowered child also starts a session of its own (`setsid`, which execs in place: the pid is
 * the child's), so that it can lower its own autogroup (lowerOwnAutogroup) without touching the
 * service's.
 */
export function nicedCommand(priority: Priority, args: string[]): string[] {
  const step = priority.nice - getPriority();
  const niced = NICE && step > 0 ? [NICE, "-n", String(step), ...args] : args;
  const grouped = SETSID && priority.nice > 0 ? [SETSID, ...niced] : niced;
  return CHRT && priority.idle && priority.nice > 0 ? [CHRT, "--idle", "0", ...grouped] : grouped;
}

/**
 * Linux with autogroups (`kernel.sched_autogroup_enabled`, on in most distributions' kernels)
 * shares the CPU first between sessions, then between the threads of each: niceness and the
 * idle class only rank threads within a session. A picture child in the service's session
 * therefore yielded to the API's event loop but took its session's full share against
 * PostgreSQL's and Redis' sessions, and another organization's requests waited 50-150 ms for a
 * core there (bench/notes/2026-11-27-neighbours-sittings.md). Its own session at autogroup niceness 19 (or
 * its own niceness outside the idle class) makes it yield to them as well.
 *
 * Does nothing unless this process leads its own session (nicedCommand's `setsid`): otherwise the
 * autogroup is the service's, and lowering it would lower the service.
 */
export function lowerOwnAutogroup(): void {
  if (process.platform !== "linux") return;
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // After "pid (comm) ": state, ppid, pgrp, session.
    const session = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
    if (session !== process.pid) return;
    writeFileSync("/proc/self/autogroup", String(inIdleClass() ? 19 : getPriority()));
  } catch {
    // No autogroups in this kernel (or the write refused): the session's share stays as it is.
  }
}

/** SCHED_IDLE is policy 5 in /proc/<pid>/sched. */
function inIdleClass(): boolean {
  try {
    return /^policy\s*:\s*5$/m.test(readFileSync("/proc/self/sched", "utf8"));
  } catch {
    return false;
  }
}
