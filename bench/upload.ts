/**
 * `npm run bench -- upload`: throughput of a 1 GiB upload to the embedded storage node,
 * `media upload` (the CLI, through presigned multipart URLs) against rclone (Debian's
 * package, straight to the node with its S3 credential), same part size and concurrency,
 * alternating runs in one process; the median of each is reported.
 *
 * BENCH_RUNS (default 5), BENCH_SIZE_MIB (1024), BENCH_PART_MIB (16), BENCH_CONCURRENCY (4),
 * BENCH_MODE=embedded|services (embedded: PGlite and in-process queues; services: the
 * PostgreSQL/Redis of TEST_DATABASE_URL/TEST_REDIS_URL, as `npm test` sets them).
 */
import { writeSection } from "./_load.ts";
import { execSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { newOrg, startServer } from "../test/support/server.ts";

const MiB = 1024 * 1024;
const runs = Number(process.env.BENCH_RUNS ?? 5);
const sizeMiB = Number(process.env.BENCH_SIZE_MIB ?? 1024);
const partMiB = Number(process.env.BENCH_PART_MIB ?? 16);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4);
const root = join(import.meta.dir, "..");
const work = join(import.meta.dir, ".work");
const file = join(work, `upload-${sizeMiB}MiB.bin`);

const rclone = Bun.which("rclone");
if (!rclone) {
  console.error("rclone is not installed (apt-get install rclone)");
  process.exit(2);
}

/** 1 GiB from a 16 MiB random block: written in seconds, incompressible enough for a store that does not compress. */
async function makeFile() {
  mkdirSync(work, { recursive: true });
  const block = new Uint8Array(16 * MiB);
  for (let i = 0; i < block.length; i += 65536) crypto.getRandomValues(block.subarray(i, i + 65536));
  const writer = Bun.file(file).writer();
  for (let written = 0; written < sizeMiB * MiB; written += block.length) {
    const n = Math.min(block.length, sizeMiB * MiB - written);
    // vary each block a little so no two parts are identical
    block[0] = written / block.length;
    writer.write(block.subarray(0, n));
    await writer.flush();
  }
  await writer.end();
}

interface Sample {
  /** Wall time of the client process, start to exit. */
  seconds: number;
  /** CPU seconds of the client process. */
  clientCpu: number;
  /** CPU seconds of this process meanwhile: the API server and the storage node (the bench itself idles). */
  serverCpu: number;
}

async function timed(cmd: string[], env: Record<string, string>): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const proc = Bun.spawn(cmd, { env, stdout: "pipe", stderr: "pipe", cwd: root });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}\n${out}\n${err}`);
  const usage = proc.resourceUsage();
  const clientCpu = usage ? Number(usage.cpuTime.total) / 1e6 : Number.NaN;
  return { seconds, clientCpu, serverCpu: (cpu.user + cpu.system) / 1e6 };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const embedded = (process.env.BENCH_MODE ?? "embedded") === "embedded";
console.log(`preparing ${sizeMiB} MiB in ${file} ...`);
await makeFile();
// Generous rate limit: the bench measures bytes, not the API's request budget.
const server = await startServer({ embedded, env: { RATE_LIMIT_PER_MINUTE: "100000" } });
process.once("SIGINT", async () => {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
  process.exit(130);
});
try {
  const org = await newOrg(server, "Bench");
  const bucket = (await org.admin.post("/api/buckets", { name: "bench" })).body as { id: string };
  const storageUrl = server.services.backends.storage.replace(/^embedded at /, "");
  if (!storageUrl.startsWith("http")) throw new Error(`expected the embedded storage node, got ${server.services.backends.storage}`);
  const creds = JSON.parse(readFileSync(join(server.config.dataDir, "storage-credentials.json"), "utf8")) as { accessKeyId: string; secretAccessKey: string };

  const baseEnv: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
  const cliEnv = { ...baseEnv, MEDIA_URL: server.url, MEDIA_API_KEY: org.adminKey.secret, XDG_CONFIG_HOME: join(work, "config") };
  // AWS_CA_BUNDLE is left out on purpose: rclone 1.60 fails on these machines when it is set.
  const rcloneEnv = {
    ...baseEnv,
    RCLONE_CONFIG_BENCH_TYPE: "s3",
    RCLONE_CONFIG_BENCH_PROVIDER: "Other",
    RCLONE_CONFIG_BENCH_ENDPOINT: storageUrl,
    RCLONE_CONFIG_BENCH_REGION: "us-east-1",
    RCLONE_CONFIG_BENCH_ACCESS_KEY_ID: creds.accessKeyId,
    RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY: creds.secretAccessKey,
    RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE: "true",
  };
  const part = `${partMiB}MiB`;
  // --force: every run writes the same key again, as rclone's do (the CLI refuses to replace an object without it).
  const cli = (key: string, extra: string[] = []) =>
    [process.execPath, "cli/main.ts", "upload", file, "--bucket", bucket.id, "--key", key, "--part-size", part, "--threshold", part, "--concurrency", String(concurrency), "--force", "--quiet", ...extra];
  const rcloneCmd = (key: string, extra: string[] = []) => [
    rclone,
    "copyto",
    file,
    `bench:${server.config.s3.bucket}/${bucket.id}/${key}`,
    "--s3-chunk-size",
    `${partMiB}M`,
    "--s3-upload-cutoff",
    `${partMiB}M`,
    "--s3-upload-concurrency",
    String(concurrency),
    "--s3-no-check-bucket",
    // Upload every run: without this rclone skips a destination that already matches.
    "--no-check-dest",
    "--retries",
    "1",
    ...extra,
  ];
  const contenders: [string, string[]][] = [
    ["media upload (no bar: pipes, --quiet)", cli("bench/cli.bin")],
    ["media upload --progress (as in a terminal)", cli("bench/cli-progress.bin", ["--progress"])],
    ["rclone copyto (default: MD5 of the file first)", rcloneCmd("bench/rclone.bin")],
    ["rclone copyto --s3-disable-checksum", rcloneCmd("bench/rclone-nosum.bin", ["--s3-disable-checksum"])],
  ];
  const samples = new Map<string, Sample[]>(contenders.map(([name]) => [name, []]));
  const load0 = loadavg()[0]!;
  // warm-up, not counted: page cache, JIT, first-start costs
  await timed(cli("bench/warm.bin"), cliEnv);
  await timed(rcloneCmd("bench/warm.bin"), rcloneEnv);
  for (let r = 1; r <= runs; r++) {
    for (const [name, cmd] of contenders) {
      const s = await timed(cmd, name.startsWith("rclone") ? rcloneEnv : cliEnv);
      samples.get(name)!.push(s);
      console.log(`run ${r} ${name.padEnd(48)} ${s.seconds.toFixed(2)} s  ${(sizeMiB / s.seconds).toFixed(0)} MiB/s  cpu client ${s.clientCpu.toFixed(1)} s, server ${s.serverCpu.toFixed(1)} s`);
    }
  }
  const load1 = loadavg()[0]!;

  const times = (name: string) => samples.get(name)!.map((x) => x.seconds);
  const rate = (name: string) => sizeMiB / median(times(name));
  const version = (cmd: string) => execSync(cmd, { env: { ...baseEnv } }).toString().split("\n")[0]!.trim();
  console.log(`\n${new Date().toISOString().slice(0, 10)}, ${cpus().length} vCPU ${cpus()[0]?.model ?? ""}, ${Math.round(totalmem() / 1024 ** 3)} GiB, Bun ${Bun.version}, ${version(`${rclone} version`)}`);
  const out: string[] = [];
  out.push(`${sizeMiB} MiB, parts ${partMiB} MiB, concurrency ${concurrency}, ${runs} runs each, ${embedded ? "embedded" : "services"} mode, load average ${load0.toFixed(1)} -> ${load1.toFixed(1)}`, "");
  out.push("| client | median s | MiB/s (median) | runs (s) | client CPU s (median) | server CPU s (median) |");
  out.push("|---|---|---|---|---|---|");
  for (const [name] of contenders) {
    const t = times(name);
    const cpu = (f: (x: Sample) => number) => median(samples.get(name)!.map(f)).toFixed(1);
    out.push(`| ${name} | ${median(t).toFixed(2)} | ${rate(name).toFixed(0)} | ${t.map((x) => x.toFixed(1)).join(", ")} | ${cpu((x) => x.clientCpu)} | ${cpu((x) => x.serverCpu)} |`);
  }
  const best = Math.max(rate(contenders[2]![0]), rate(contenders[3]![0]));
  const ratio = rate(contenders[0]![0]) / best;
  out.push("", `CLI / fastest rclone: ${ratio.toFixed(2)}x (target >= 1x, **${ratio >= 1 ? "met" : "missed"}**); with --progress: ${(rate(contenders[1]![0]) / best).toFixed(2)}x`);
  console.log(out.join("\n"));
  // The analysis under "## upload" is written by hand; each run replaces only its own section.
  if (!process.env.BENCH_NO_WRITE) {
    writeSection("upload", [`## upload, latest run (${new Date().toISOString().slice(0, 10)}; written by \`npm run bench -- upload\`)`, "", ...out].join("\n"));
  }
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
