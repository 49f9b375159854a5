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
