/**
 * CPU weights between the parts of a deployment, as a service manager or a container runtime
 * sets them (systemd's `CPUWeight=`, compose's `cpu_shares:`), for the neighbours bench's
 * `packaged` configuration. Linux only, and only where this process may create CPU cgroups
 * (root, with the cpu controller mounted: cgroup v1 `cpu.shares` or v2 `cpu.weight`).
 *
 * Weights are given as v1 shares (1024 is a unit's default) and converted for v2 as systemd
 * does (100 is the default there). A process inside a cgroup other than the root one is not in
 * an autogroup, so the weights, not sessions, decide between the parts.
 */
import { existsSync, readFileSync, rmdirSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const V1 = "/sys/fs/cgroup/cpu";
const V2 = "/sys/fs/cgroup";

function root(): { dir: string; file: "cpu.shares" | "cpu.weight" } | null {
  if (process.platform !== "linux") return null;
  if (existsSync(join(V1, "cpu.shares"))) return { dir: V1, file: "cpu.shares" };
  const controllers = join(V2, "cgroup.subtree_control");
  if (existsSync(controllers) && readFileSync(controllers, "utf8").includes("cpu")) return { dir: V2, file: "cpu.weight" };
  return null;
}

export interface CpuGroup {
  /** Prepended to a command line: the command runs inside the group. */
  prefix: string[];
  /** Moves running processes (and so their later children) into the group. */
  adopt(pids: number[]): void;
}

/** Whether groups can be made here; the reason when not. */
export function cpuGroupsUnavailable(): string | null {
  const r = root();
  if (!r) return "no writable cpu cgroup controller (cgroup v1 cpu.shares or v2 cpu.weight)";
  try {
    const probe = join(r.dir, `mbench-probe-${process.pid}`);
    mkdirSync(probe);
    rmdirSync(probe);
    return null;
  } catch (err) {
    return `cannot create cpu cgroups: ${(err as Error).message}`;
  }
}

/** Creates the groups; `release` moves every process in them back to the root group and removes them. */
export function cpuGroups(weights: Record<string, number>): { groups: Record<string, CpuGroup>; release(): void } {
  const r = root();
  if (!r) throw new Error("no cpu cgroup controller");
  const dirs: string[] = [];
  const groups: Record<string, CpuGroup> = {};
  for (const [name, shares] of Object.entries(weights)) {
    const dir = join(r.dir, `mbench-${name}-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    dirs.push(dir);
    const value = r.file === "cpu.shares" ? shares : Math.max(1, Math.min(10_000, Math.round((shares * 100) / 1024)));
    writeFileSync(join(dir, r.file), String(value));
    const procs = join(dir, "cgroup.procs");
    groups[name] = {
      prefix: ["sh", "-c", `echo $$ > ${procs} && exec "$0" "$@"`],
      adopt(pids) {
        for (const pid of pids) {
          try {
            writeFileSync(procs, String(pid));
          } catch {
            // Gone meanwhile (a backend that ended): nothing to move.
          }
        }
      },
    };
  }
  let released = false;
  return {
    groups,
    release() {
      if (released) return;
      released = true;
      for (const dir of dirs) {
        const pids = readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean);
        for (const pid of pids) {
          try {
            writeFileSync(join(r.dir, "cgroup.procs"), pid);
          } catch {
            // Exited meanwhile.
          }
        }
        // A process that was exiting as it was moved can hold the group a moment longer.
        for (let attempt = 0; attempt < 20; attempt++) {
          try {
            rmdirSync(dir);
            break;
          } catch {
            Bun.sleepSync(100);
          }
        }
      }
    },
  };
}

/** Pids of the processes whose command name is `name` (pgrep -x), e.g. every PostgreSQL process. */
export function pidsNamed(name: string): number[] {
  const out = Bun.spawnSync(["pgrep", "-x", name]).stdout.toString();
  return out.split("\n").filter(Boolean).map(Number);
}
