import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

/**
 * A throwaway one-node Ceph cluster with a RADOS Gateway (Debian's `ceph-mon`, `ceph-osd` and
 * `radosgw`, 16.2): one monitor, one BlueStore OSD on a sparse file, no manager, no cephx, pools
 * of one replica and few placement groups (one OSD cannot hold the default count for the
 * gateway's pools). Every daemon runs in the foreground as our child, logs under `dir`, and is
 * stopped by `stop()`. About 30 seconds from nothing to an S3 endpoint on this machine.
 */
export interface CephCluster {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

export function cephInstalled(): boolean {
  return ["ceph-mon", "ceph-osd", "radosgw", "radosgw-admin", "monmaptool", "ceph"].every((tool) => Bun.which(tool) !== null);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function run(cmd: string[], timeoutMs = 60_000): Promise<string> {
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", timeout: timeoutMs });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if ((await proc.exited) !== 0) throw new Error(`${cmd.join(" ")} failed: ${err || out}`);
  return out.trim();
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== null) return value;
    } catch (err) {
      last = err;
    }
    await Bun.sleep(500);
  }
  throw new Error(`${what} did not happen within ${timeoutMs / 1000} s${last ? `: ${String(last)}` : ""}`);
}

export async function startCeph(dir: string): Promise<CephCluster> {
  const [monPort, rgwPort] = [await freePort(), await freePort()];
  const fsid = crypto.randomUUID();
  for (const sub of ["mon/a", "osd/0", "rgw", "run", "log"]) mkdirSync(join(dir, sub), { recursive: true });
  const conf = join(dir, "ceph.conf");
  writeFileSync(
    conf,
    `[global]
fsid = ${fsid}
mon host = v1:127.0.0.1:${monPort}
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
log file = ${dir}/log/$name.log
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
[mon]
mon data = ${dir}/mon/$id
[osd]
osd data = ${dir}/osd/$id
osd objectstore = bluestore
bluestore block path = ${dir}/osd-$id.block
bluestore block create = true
bluestore block size = 4294967296
osd memory target = 939524096
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw data = ${dir}/rgw
`,
  );
  const children: ReturnType<typeof Bun.spawn>[] = [];
  const daemon = (cmd: string[]) => {
    // -f: stay in the foreground, so the process we hold is the daemon and stop() can end it.
    const proc = Bun.spawn([...cmd, "-c", conf, "-f"], { stdout: "ignore", stderr: "ignore" });
    children.push(proc);
    return proc;
  };
  const stop = async () => {
    for (const child of children.reverse()) child.kill("SIGTERM");
    await Promise.all(children.map((c) => Promise.race([c.exited, Bun.sleep(10_000).then(() => c.kill("SIGKILL"))])));
  };
  try {
    await run(["monmaptool", "--create", "--addv", "a", `v1:127.0.0.1:${monPort}`, "--fsid", fsid, join(dir, "monmap")]);
    await run(["ceph-mon", "-c", conf, "--mkfs", "-i", "a", "--monmap", join(dir, "monmap")]);
    daemon(["ceph-mon", "-i", "a"]);
    const ceph = (...args: string[]) => run(["ceph", "-c", conf, "--connect-timeout", "10", ...args]);
    await until("the monitor answering", 30_000, async () => (await ceph("status")) || null);
    const osdUuid = crypto.randomUUID();
    // Retried: a monitor that has just answered `status` once still refused the next command
    // (EPERM, "problem getting command descriptions from mon") in a full run. `osd new` with the
    // same uuid gives the same id, so a retry after a refusal it did carry out is harmless.
    const osdId = await until("the monitor creating the OSD", 30_000, async () => (await ceph("osd", "new", osdUuid)).trim() || null);
    await run(["ceph-osd", "-c", conf, "-i", osdId, "--mkfs", "--osd-uuid", osdUuid]);
    let osd = daemon(["ceph-osd", "-i", osdId]);
    let restarts = 0;
    // A readiness wait, not a check: a fresh BlueStore OSD reports itself up to the monitor
    // after its first heartbeats, which took over 60 s once in a full run on an idle machine,
    // and once never happened within 180 s; an OSD that exited meanwhile is started again, and
    // a wait that still fails says what the OSD's log ended with.
    await until("the OSD coming up", 180_000, async () => {
      if (osd.exitCode !== null && restarts < 2) {
        restarts++;
        osd = daemon(["ceph-osd", "-i", osdId]);
      }
      return JSON.parse(await ceph("osd", "stat", "--format=json")).num_up_osds === 1 ? true : null;
    }).catch((err: Error) => {
      const log = existsSync(join(dir, "log", `osd.${osdId}.log`)) ? readFileSync(join(dir, "log", `osd.${osdId}.log`), "utf8").split("\n").slice(-15).join("\n") : "(no log)";
      throw new Error(`${err.message} (OSD ${osd.exitCode === null ? "running" : `exited ${osd.exitCode}`}, restarted ${restarts} time(s)); its log ended with:\n${log}`);
    });
    daemon(["radosgw", "-n", "client.rgw.a"]);
    const endpoint = `http://127.0.0.1:${rgwPort}`;
    await until("the gateway answering", 60_000, async () => ((await fetch(endpoint)).ok ? true : null));
    const accessKeyId = `COMPAT${crypto.randomUUID().replace(/-/g, "").slice(0, 14).toUpperCase()}`;
    const secretAccessKey = crypto.randomUUID().replace(/-/g, "");
    await run(["radosgw-admin", "-c", conf, "user", "create", "--uid=media", "--display-name=media", `--access-key=${accessKeyId}`, `--secret=${secretAccessKey}`]);
    return { endpoint, accessKeyId, secretAccessKey, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
