import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { chownSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./processes.ts";

/**
 * Private service instances that fault tests may stop, kill and start again. The PostgreSQL
 * and Redis of the test run are shared with other runs and must never be disturbed, so every
 * fault is injected into an instance that belongs to one test file only.
 */

async function waitForPort(port: number, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const s = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
      s.end();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${what} did not start listening on ${port}`);
      await Bun.sleep(50);
    }
  }
}

export const redisServerPath = Bun.which("redis-server");

export interface PrivateRedis {
  url: string;
  port: number;
  start(): Promise<void>;
  /** SIGKILL: no goodbye to clients, as when the host dies. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: connections stay open and nothing answers, as behind a dropped network. */
  freeze(): void;
  thaw(): void;
  running(): boolean;
}

/**
 * A throwaway redis-server on a free port; kill and start keep the port. No persistence, unless
 * `persistent`: then an append-only file synced on every write keeps the data across a kill,
 * as a production Redis configured for queues would.
 */
export async function privateRedis(opts: { persistent?: boolean } = {}): Promise<PrivateRedis & { destroy(): Promise<void> }> {
  if (!redisServerPath) throw new Error("redis-server is not installed");
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "media-fault-redis-"));
  const persistence = opts.persistent ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"];
  let proc: ReturnType<typeof Bun.spawn> | null = null;
  const self: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    running: () => proc !== null,
    async start() {
      if (proc) return;
      proc = Bun.spawn([redisServerPath!, "--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", ...persistence], { stdout: "ignore", stderr: "ignore" });
      await waitForPort(port, "redis-server");
    },
    freeze() {
      proc?.kill("SIGSTOP");
    },
    thaw() {
      proc?.kill("SIGCONT");
    },
    async kill() {
      if (!proc) return;
      proc.kill("SIGCONT");
      proc.kill("SIGKILL");
      await proc.exited;
      proc = null;
    },
  };
  await self.start();
  return {
    ...self,
    async destroy() {
      await self.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const pgBin = ["/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"].find((d) => existsSync(join(d, "initdb")));
const isRoot = process.getuid?.() === 0;

/** Why a private PostgreSQL cannot be made here, or null when it can. */
export const privatePostgresUnavailable: string | null = !pgBin
  ? "PostgreSQL server binaries (initdb, pg_ctl) are not installed"
  : isRoot && !Bun.which("runuser")
    ? "running as root without runuser, and PostgreSQL refuses to run as root"
    : null;

export interface PrivatePostgres {
  url: string;
  port: number;
  /** `pg_ctl stop -m immediate`: every backend dies at once, clients see their sockets close. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** `pg_ctl restart -m fast`: clients get admin_shutdown (57P01) on open connections. */
  restart(): Promise<void>;
  destroy(): Promise<void>;
}

/** A PostgreSQL cluster of our own in a temporary directory (initdb costs about a second). */
export async function privatePostgres(): Promise<PrivatePostgres> {
  if (privatePostgresUnavailable) throw new Error(privatePostgresUnavailable);
  const dir = mkdtempSync(join(tmpdir(), "media-fault-pg-"));
  // PostgreSQL will not run as root: as root, the cluster belongs to the postgres user.
  if (isRoot) {
    const pw = await Bun.$`id -u postgres`.quiet().text();
    const gid = await Bun.$`id -g postgres`.quiet().text();
    chownSync(dir, Number(pw.trim()), Number(gid.trim()));
  }
  const data = join(dir, "data");
  const port = await freePort();
  const asPg = (cmd: string[]) => (isRoot ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd);
  const run = async (cmd: string[]) => {
    const proc = Bun.spawn(asPg(cmd), { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}\n${out}\n${err}`);
  };
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  const ctl = (...args: string[]) => run([join(pgBin!, "pg_ctl"), "-D", data, "-o", opts, "-l", join(dir, "log"), "-w", ...args]);
  await run([join(pgBin!, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  await ctl("start");
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => ctl("-m", "immediate", "stop"),
    start: () => ctl("start"),
    restart: () => ctl("-m", "fast", "restart"),
    async destroy() {
      await ctl("-m", "immediate", "stop").catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface FaultProxy {
  url: string;
  port: number;
  /**
   * "pass": bytes flow both ways. "hang": every connection, open or new, is accepted and never
   * answered, as behind a dead load balancer; requests end only by the client's own deadline.
   */
  setMode(mode: "pass" | "hang"): void;
  /**
   * Closes the connections held silent by a hang, as a store coming back after a restart would:
   * their requests fail now instead of at the client's deadline (a server stopped meanwhile
   * would otherwise wait for them).
   */
  dropHung(): void;
  stop(): void;
}

interface ProxyConn {
  upstream: import("bun").Socket<unknown> | null;
  /** Client bytes that arrived before the upstream connection was open, or while it was full. */
  toUpstream: Uint8Array[];
  toClient: Uint8Array[];
  hung: boolean;
}

/** Writes what the socket accepts and keeps the rest for its drain event. */
function pump(socket: import("bun").Socket<any>, queue: Uint8Array[]) {
  while (queue.length > 0) {
    const chunk = queue[0]!;
    const n = socket.write(chunk);
    if (n < chunk.length) {
      queue[0] = chunk.subarray(Math.max(n, 0));
      return;
    }
    queue.shift();
  }
}

/** A TCP proxy to 127.0.0.1:`targetPort` that a test can switch to hanging and back. */
export function faultProxy(targetPort: number): FaultProxy {
  let mode: "pass" | "hang" = "pass";
  const conns = new Set<import("bun").Socket<ProxyConn>>();
  const server = Bun.listen<ProxyConn>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        client.data = { upstream: null, toUpstream: [], toClient: [], hung: mode === "hang" };
        conns.add(client);
        if (client.data.hung) return;
        Bun.connect({
          hostname: "127.0.0.1",
          port: targetPort,
          socket: {
            open(up) {
              client.data.upstream = up;
              pump(up, client.data.toUpstream);
            },
            data(_up, chunk) {
              client.data.toClient.push(new Uint8Array(chunk));
              pump(client, client.data.toClient);
            },
            drain() {
              pump(client.data.upstream!, client.data.toUpstream);
            },
            close() {
              client.end();
            },
            error() {
              client.end();
            },
          },
        }).catch(() => client.end());
      },
      data(client, chunk) {
        if (client.data.hung) return;
        client.data.toUpstream.push(new Uint8Array(chunk));
        if (client.data.upstream) pump(client.data.upstream, client.data.toUpstream);
      },
      drain(client) {
        pump(client, client.data.toClient);
      },
      close(client) {
        conns.delete(client);
        client.data.upstream?.end();
      },
      error(client) {
        client.data.upstream?.end();
      },
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port,
    setMode(next) {
      mode = next;
      if (next !== "hang") return;
      // Pooled keep-alive connections would otherwise carry on working: they go silent too.
      for (const c of conns) {
        c.data.hung = true;
        c.data.upstream?.end();
        c.data.upstream = null;
      }
    },
    dropHung() {
      for (const c of conns) if (c.data.hung) c.end();
    },
    stop() {
      for (const c of conns) c.end();
      server.stop(true);
    },
  };
}

export { waitForPort };
