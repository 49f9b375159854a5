import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { freePort } from "./processes.ts";

/**
 * A PostgreSQL primary and a streaming replica of it, made for one test file: their own
 * clusters in a temporary directory, on free ports, run as the `postgres` system user. The
 * machine's own server is never touched.
 */
export interface ReplicaPair {
  primaryUrl: string;
  replicaUrl: string;
  /** Superuser connections to each, for the test's own statements. */
  primary: postgres.Sql;
  replica: postgres.Sql;
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Waits until the replica has replayed everything the primary has written so far. */
  caughtUp(): Promise<void>;
  stopReplica(): void;
  startReplica(): Promise<void>;
  /** Stops both servers and removes their directories. */
  remove(): Promise<void>;
}

function binDir(): string {
  const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
  const found = versions.map((v) => `/usr/lib/postgresql/${v}/bin`).find((d) => existsSync(join(d, "pg_basebackup")));
  if (!found) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin");
  return found;
}

function asPostgres(bin: string, args: string[]): void {
  const done = Bun.spawnSync(["runuser", "-u", "postgres", "--", bin, ...args], { stdout: "pipe", stderr: "pipe" });
  if (done.exitCode !== 0) throw new Error(`${bin} ${args.join(" ")} failed (${done.exitCode}): ${done.stderr.toString()}${done.stdout.toString()}`);
}

export async function startReplicaPair(): Promise<ReplicaPair> {
  const bin = binDir();
  const root = mkdtempSync(join(tmpdir(), "media-replica-pair-"));
  chownSync(root, uidOf("postgres"), gidOf("postgres"));
  const p = join(root, "primary");
  const r = join(root, "replica");
  const [pPort, rPort] = [await freePort(), await freePort()];
  // Small and unsafe on purpose: a throwaway pair on a shared test machine.
  const options = (port: number) =>
    `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c shared_buffers=16MB -c max_connections=80 -c fsync=off -c full_page_writes=off`;
  const ctl = (dir: string, port: number, action: "start" | "stop") =>
    action === "start"
      ? asPostgres(`${bin}/pg_ctl`, ["-D", dir, "-l", `${dir}.log`, "-w", "-t", "60", "-o", options(port), "start"])
      : asPostgres(`${bin}/pg_ctl`, ["-D", dir, "-m", "fast", "-w", "stop"]);
  try {
    asPostgres(`${bin}/initdb`, ["-D", p, "-A", "trust", "-U", "postgres", "--no-sync"]);
    appendFileSync(join(p, "pg_hba.conf"), "\nhost replication all 127.0.0.1/32 trust\n");
    ctl(p, pPort, "start");
    asPostgres(`${bin}/pg_basebackup`, ["-h", "127.0.0.1", "-p", String(pPort), "-U", "postgres", "-D", r, "-R", "-X", "stream"]);
    ctl(r, rPort, "start");
  } catch (err) {
    for (const dir of [r, p]) if (existsSync(join(dir, "postmaster.pid"))) Bun.spawnSync(["runuser", "-u", "postgres", "--", `${bin}/pg_ctl`, "-D", dir, "-m", "immediate", "stop"]);
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  const primaryUrl = `postgres://postgres@127.0.0.1:${pPort}/postgres`;
  const replicaUrl = `postgres://postgres@127.0.0.1:${rPort}/postgres`;
  const primary = postgres(primaryUrl, { max: 1, onnotice: () => {} });
  let replica = postgres(replicaUrl, { max: 1, onnotice: () => {} });
  let replicaUp = true;
  const pair: ReplicaPair = {
    primaryUrl,
    replicaUrl,
    primary,
    get replica() {
      return replica;
    },
    pauseReplay: async () => void (await replica`select pg_wal_replay_pause()`),
    resumeReplay: async () => void (await replica`select pg_wal_replay_resume()`),
    caughtUp: async () => {
      const [{ lsn }] = (await primary`select pg_current_wal_insert_lsn()::text as lsn`) as unknown as [{ lsn: string }];
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await Bun.sleep(50)) {
        const [{ behind }] = (await replica`select pg_wal_lsn_diff(${lsn}::pg_lsn, pg_last_wal_replay_lsn()) > 0 as behind`) as unknown as [{ behind: boolean }];
        if (!behind) return;
      }
      throw new Error("the replica did not catch up within 60 s");
    },
    stopReplica: () => {
      ctl(r, rPort, "stop");
      replicaUp = false;
    },
    startReplica: async () => {
      await replica.end({ timeout: 1 }).catch(() => {});
      ctl(r, rPort, "start");
      replica = postgres(replicaUrl, { max: 1, onnotice: () => {} });
      replicaUp = true;
    },
    remove: async () => {
      await Promise.all([primary.end({ timeout: 1 }), replica.end({ timeout: 1 })]).catch(() => {});
      for (const [dir, port, up] of [[r, rPort, replicaUp], [p, pPort, true]] as const) {
        try {
          if (up) ctl(dir, port, "stop");
        } catch {
          // Removing the directory below is what matters; a server left running shows in the log.
        }
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
  return pair;
}

function idOf(flag: "-u" | "-g"): number {
  return Number(Bun.spawnSync(["id", flag, "postgres"]).stdout.toString().trim());
}
const uidOf = (_user: "postgres") => idOf("-u");
const gidOf = (_user: "postgres") => idOf("-g");
