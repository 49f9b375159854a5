import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU milliseconds (user + system) of this process and of its live children. At WORKER_NICE > 0
 * the worker renders in a picture host child (worker/derivatives/render-pool.ts), whose time
 * process.cpuUsage() leaves out. A child's time is read from /proc in ticks of 10 ms; a child
 * that exits between two readings takes its time with it (the host lives as long as the process).
 */
export function cpuNow(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000 + childrenCpuMs();
}

function childrenCpuMs(): number {
  let ticks = 0;
  let tasks: string[];
  try {
    tasks = readdirSync("/proc/self/task");
  } catch {
    return 0; // not Linux
  }
  for (const task of tasks) {
    let children = "";
    try {
      children = readFileSync(`/proc/self/task/${task}/children`, "utf8").trim();
    } catch {
      continue;
    }
    for (const pid of children ? children.split(" ") : []) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
      } catch {
        // gone meanwhile
      }
    }
  }
  return ticks * 10; // USER_HZ is 100
}

/** CPU milliseconds by thread name ("host:" for the children's threads), user and system apart: a snapshot for `threadCpuSince`. */
export type ThreadCpu = Map<string, { user: number; system: number }>;

function addTasks(into: ThreadCpu, pid: string, prefix: string): void {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return;
  }
  for (const task of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      const name = prefix + stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/\d+$/, "N");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const had = into.get(name) ?? { user: 0, system: 0 };
      into.set(name, { user: had.user + Number(fields[11]) * 10, system: had.system + Number(fields[12]) * 10 });
      if (!prefix) {
        const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
        for (const child of children ? children.split(" ") : []) addTasks(into, child, "host:");
      }
    } catch {
      // gone meanwhile
    }
  }
}

/** This process's threads and its children's, by name (numbers at the end of a name folded: "Bun Pool N"). Linux only; empty elsewhere. */
export function threadCpuNow(): ThreadCpu {
  const now: ThreadCpu = new Map();
  addTasks(now, String(process.pid), "");
  return now;
}

/** Per item, what each thread name spent since `before` (ms user / system), the busiest first. */
export function threadCpuSince(before: ThreadCpu, items: number): { thread: string; user: number; system: number }[] {
  const rows: { thread: string; user: number; system: number }[] = [];
  for (const [thread, now] of threadCpuNow()) {
    const then = before.get(thread) ?? { user: 0, system: 0 };
    const user = (now.user - then.user) / items;
    const system = (now.system - then.system) / items;
    if (user + system > 0) rows.push({ thread, user, system });
  }
  return rows.sort((a, b) => b.user + b.system - (a.user + a.system));
}
