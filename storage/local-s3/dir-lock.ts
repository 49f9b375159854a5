// One process per data directory. Two nodes on one directory would each keep their own
// in-memory index (an object written through one is a 404 on the other), and the start-up
// cleanup of one would delete the in-flight files of the other.
//
// The lock is a file holding the owner's pid and the time the kernel started it, created
// atomically (a hard link that fails when the file exists). A lock whose process no longer runs (or whose pid now belongs to a process started
// later, a reused pid) is stale and taken over. Liveness can only be seen in one pid
// namespace: two containers sharing a volume do not see each other's processes.

import { readFileSync, unlinkSync } from "node:fs";
import { link, mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { randomName } from "./files.ts";

export const LOCK_FILE = "node.lock";

/** Another live process holds the data directory. */
export class DataDirLocked extends Error {
  override name = "DataDirLocked";
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `Cannot start: the data directory ${dir} is in use by process ${pid} (one process per data directory). Stop that process, or set DATA_DIR to another directory.`,
    );
  }
}

export interface DirLock {
  release(): Promise<void>;
}

interface Holder {
  pid: number;
  /** The kernel's start time of the process (Linux), to tell a reused pid from the holder. */
  started: string | null;
}

/** The start time field of /proc/<pid>/stat, or null where there is no /proc. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (in parentheses, which may hold spaces): state is the 3rd field, starttime the 22nd.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

function running(h: Holder): boolean {
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    // EPERM: it exists, under another user.
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (h.started === null) return true;
  const now = startTimeOf(h.pid);
  return now === null || now === h.started;
}

function parse(text: string): Holder | null {
  try {
    const h = JSON.parse(text) as Holder;
    return Number.isInteger(h.pid) && h.pid > 0 ? { pid: h.pid, started: typeof h.started === "string" ? h.started : null } : null;
  } catch {
    return null;
  }
}

/** Directories this process holds: a second node in the same process is refused too. */
const held = new Set<string>();

/** Takes `dir`'s lock for this process, or throws DataDirLocked naming the live holder. */
export async function lockDataDir(path: string): Promise<DirLock> {
  const dir = resolve(path);
  await mkdir(dir, { recursive: true });
  if (held.has(dir)) throw new DataDirLocked(dir, process.pid);
  const file = join(dir, LOCK_FILE);
  // The token tells this hold from a later one of the same process (a node stopped and started again).
  const mine = JSON.stringify({ pid: process.pid, started: startTimeOf(process.pid), token: randomName() });
  // Written whole beside the lock, then linked into place: link fails if the lock exists, and
  // no one ever reads a lock file that is still being written.
  const draft = `${file}.${randomName()}`;
  const fh = await open(draft, "wx", 0o644);
  try {
    await fh.writeFile(mine);
    await fh.sync();
  } finally {
    await fh.close();
  }
  for (let attempt = 0; ; attempt++) {
    try {
      await link(draft, file);
      await unlink(draft);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 5) {
        await unlink(draft).catch(() => {});
        throw e;
      }
    }
    const seen = await readFile(file, "utf8").catch(() => null);
    if (seen === null) continue; // released meanwhile
    const holder = parse(seen);
    // Our own pid, not in `held`: left by an earlier process that had it (PID 1 of a container).
    if (holder && holder.pid !== process.pid && running(holder)) {
      await unlink(draft).catch(() => {});
      throw new DataDirLocked(dir, holder.pid);
    }
    await takeOver(file, seen);
  }
  held.add(dir);
  let released = false;
  const onExit = () => {
    try {
      if (readFileSync(file, "utf8") === mine) unlinkSync(file);
    } catch {
      // gone already
    }
  };
  process.once("exit", onExit);
  return {
    release: async () => {
      if (released) return;
      released = true;
      held.delete(dir);
      process.off("exit", onExit);
      if ((await readFile(file, "utf8").catch(() => null)) === mine) await unlink(file).catch(() => {});
    },
  };
}

/**
 * Moves a stale lock aside. Another process may have taken it over in between: a moved file
 * that is not the stale one is put back (link fails if a third took the place) and the caller
 * tries again, then finds the new holder alive.
 */
async function takeOver(file: string, stale: string): Promise<void> {
  const aside = `${file}.${randomName()}`;
  try {
    await rename(file, aside);
  } catch {
    return; // someone else moved it first
  }
  const moved = await readFile(aside, "utf8").catch(() => null);
  if (moved !== stale) await link(aside, file).catch(() => {});
  await unlink(aside).catch(() => {});
}
