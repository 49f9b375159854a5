/**
 * `npx bun bench/thumbs.ts`: thumbnails per second through the whole worker path (outbox ->
 * queue -> processor -> storage -> database) against a bare sharp loop doing the same
 * rendering on the same images in the same run, against ImageMagick `convert`, and video
 * posters per second. Prints a Markdown section and writes it to bench/results/thumbs.md.
 *
 * Options: --images N (distinct 12 MP photos, 24) --rounds N (each photo uploaded N times per
 * batch, 2) --repeat N (worker batches per backend, each between two bare batches, 3)
 * --videos N (10 s 1280x720 H.264 clips, 6) --concurrency N (bare loops, 2) --worker-concurrency N
 * (WORKER_CONCURRENCY, default: --concurrency)
 * --modes embedded,services (services: PostgreSQL + Redis/BullMQ when reachable) --threads 1 (CPU per
 * thumbnail by thread after every batch, on stderr) --profile 1 (the JavaScript thread's top
 * functions over every worker batch, bun:jsc's sampling profiler, on stderr; BENCH_PROFILE_LINES lines, 45).
 */
import { imageMagickConvert } from "./_imagemagick.ts";
import { cpuNow, threadCpuNow, threadCpuSince, type ThreadCpu } from "./_cpu.ts";
import { writeSection } from "./_load.ts";
import { cpus, loadavg, totalmem } from "node:os";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, count, eq, inArray, max } from "drizzle-orm";
import postgres from "postgres";
import sharp from "sharp";
import { loadConfig } from "../app/config.ts";
import { createLogger } from "../app/log.ts";
import { createServices, type Services } from "../app/services.ts";
import { derivatives, orgUsage } from "../db/schema/index.ts";
import { createBucket } from "../domain/buckets/buckets.ts";
import type { Caller } from "../domain/access/caller.ts";
import { THUMBNAIL_EDGE } from "../domain/derivatives/derivatives.ts";
import { cpuJobsInHand } from "../domain/core/jobs.ts";
import { createOrganization } from "../domain/access/organizations.ts";
import { objectPath } from "../domain/media/storage-keys.ts";
import { confirmUpload } from "../domain/media/uploads.ts";
import type { BullQueue } from "../worker/bullmq-queue.ts";
import { renderBase, renderKind, thumbnailFacts } from "../worker/derivatives/generate.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const CONVERT = imageMagickConvert() ?? "convert";
const IMAGES = Number(args.get("images") ?? 24);
const ROUNDS = Number(args.get("rounds") ?? 2);
/** Worker batches per backend, each followed by a bare batch: the machine's other load drifts, neighbours share it. */
const REPEAT = Number(args.get("repeat") ?? 3);
const VIDEOS = Number(args.get("videos") ?? 6);
const CONCURRENCY = Number(args.get("concurrency") ?? 2);
/** --threads 1: after every batch, CPU ms per thumbnail by thread (this process and the picture host), on stderr. */
const THREADS = args.get("threads") === "1";
/** --profile 1: a sampling profile of the JavaScript thread over every worker batch (bun:jsc), its top functions on stderr. */
const PROFILE = args.get("profile") === "1";

function printThreads(label: string, before: ThreadCpu, items: number): void {
  if (!THREADS) return;
  const rows = threadCpuSince(before, items).map((r) => `${r.thread} ${r.user.toFixed(1)}u/${r.system.toFixed(1)}s`);
  console.error(`threads, ${label} (ms per thumbnail): ${rows.join(", ")}`);
}
/** Jobs the worker runs at once (WORKER_CONCURRENCY); more than the cores lets one job's storage and database waits overlap another's rendering. */
const WORKER_CONCURRENCY = Number(args.get("worker-concurrency") ?? CONCURRENCY);
const MODES = (args.get("modes") ?? "embedded,services").split(",");
const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
/** The worker's settings, the same for the bare loop and every backend (WORKER_NICE and WORKER_SCHED_IDLE may be set to compare). */
const WORKER_ENV: Record<string, string> = {
  LOG_LEVEL: "warn",
  WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
  ...Object.fromEntries(["WORKER_NICE", "WORKER_SCHED_IDLE"].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : []))),
};
const WORKER = loadConfig(WORKER_ENV).worker;

const work = join(import.meta.dir, ".work");
mkdirSync(work, { recursive: true });
const log = (line: string) => process.stderr.write(`${line}\n`);

// ---- Fixtures: made once, kept in bench/.work (git-ignored).

/** A 4000x3000 JPEG that decodes like a photograph: smooth structure plus sensor-like noise. */
async function photo(seed: number): Promise<Buffer> {
  const w = 4000;
  const h = 3000;
  let x = seed * 7919 + 1;
  const rand = () => ((x = (x * 1103515245 + 12345) & 0x7fffffff), x / 0x7fffffff);
  const low = Buffer.alloc(40 * 30 * 3);
  for (let i = 0; i < low.length; i++) low[i] = rand() * 255;
  const structure = await sharp(low, { raw: { width: 40, height: 30, channels: 3 } }).resize(w, h, { kernel: "cubic" }).raw().toBuffer();
  const noise = Buffer.alloc(w * h * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = rand() * 16;
  return sharp(structure, { raw: { width: w, height: h, channels: 3 } })
    .composite([{ input: noise, raw: { width: w, height: h, channels: 3 }, blend: "add" }])
    .jpeg({ quality: 85 })
    .toBuffer();
}

async function fixtures(): Promise<{ photos: string[]; videos: string[] }> {
  const photos: string[] = [];
  for (let i = 0; i < IMAGES; i++) {
    const path = join(work, `photo-${i}.jpg`);
    if (!existsSync(path)) writeFileSync(path, await photo(i));
    photos.push(path);
  }
  const videos: string[] = [];
  for (let i = 0; i < VIDEOS; i++) {
    const path = join(work, `video-${i}.mp4`);
    if (!existsSync(path)) {
      const p = Bun.spawnSync(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", `testsrc2=duration=10:size=1280x720:rate=30,hue=h=${i * 40}`, "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast", "-g", "60", "-y", path]);
      if (p.exitCode !== 0) throw new Error(p.stderr.toString());
    }
    videos.push(path);
  }
  return { photos, videos };
}

// ---- Bare loops: the same rendering, no queue, no storage, no database.

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
  return (performance.now() - started) / 1000;
}

/** Throughput, and this process's CPU time per item: the second does not depend on what else the machine runs. */
interface Measured {
  perSecond: number;
  cpuMs: number;
}

async function bareSharp(buffers: Buffer[]): Promise<Measured> {
  const items = Array.from({ length: ROUNDS }, () => buffers).flat();
  const cpu = cpuNow();
  const threads = threadCpuNow();
  // What the worker makes of each image, by the worker's own calls: its SHA-256, its facts and
  // thumbnail (rendered where the worker renders), the placeholder and hash of the thumbnail.
  const seconds = await pool(items, CONCURRENCY, async (bytes) => {
    const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    const rendered = await renderKind(WORKER, "image", { ...renderBase(WORKER, "image/jpeg"), file: "", bytes, dir: "" });
    return { sha256, ...rendered.info, ...(await thumbnailFacts("image", rendered.thumbnail.bytes)) };
  });
  printThreads("bare", threads, items.length);
  return { perSecond: items.length / seconds, cpuMs: (cpuNow() - cpu) / items.length };
}

async function imageMagick(photos: string[], tuned: boolean): Promise<number> {
  const out = mkdtempSync(join(tmpdir(), "bench-convert-"));
  try {
    const seconds = await pool(photos, CONCURRENCY, async (p) => {
      const hint = tuned ? ["-define", `jpeg:size=${THUMBNAIL_EDGE * 2}x${THUMBNAIL_EDGE * 2}`] : [];
      const proc = Bun.spawn([CONVERT, ...hint, p, "-auto-orient", "-thumbnail", `${THUMBNAIL_EDGE}x${THUMBNAIL_EDGE}`, join(out, `${Math.random()}.webp`)]);
      if ((await proc.exited) !== 0) throw new Error("convert failed");
    });
    return photos.length / seconds;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function barePosters(videos: string[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "bench-poster-"));
  try {
    const items = [...videos, ...videos];
    // The worker's own render call (node-av poster + sharp), with no queue, storage or database.
    const seconds = await pool(items, CONCURRENCY, (file) => renderKind(WORKER, "video", { ...renderBase(WORKER, "video/mp4"), file, dir }));
    return items.length / seconds;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- The worker path.

interface Backend {
  name: string;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

async function backends(): Promise<Backend[]> {
  const out: Backend[] = [];
  if (MODES.includes("embedded")) {
    const dir = mkdtempSync(join(tmpdir(), "bench-embedded-"));
    out.push({ name: "embedded (PGlite, in-process queue)", env: { DATA_DIR: dir }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) });
  }
  if (MODES.includes("services")) {
    const admin = postgres(PG_URL, { max: 1, onnotice: () => {}, connect_timeout: 3 });
    try {
      const name = `media_bench_${Date.now()}`;
      await admin.unsafe(`create database ${name}`);
      const url = new URL(PG_URL);
      url.pathname = `/${name}`;
      const dir = mkdtempSync(join(tmpdir(), "bench-services-"));
      out.push({
        name: "PostgreSQL + Redis (BullMQ worker in the process)",
        env: { DATA_DIR: dir, DATABASE_URL: url.toString(), REDIS_URL, REDIS_PREFIX: `mbench-${Date.now()}` },
        cleanup: async () => {
          rmSync(dir, { recursive: true, force: true });
          const a = postgres(PG_URL, { max: 1, onnotice: () => {} });
          await a.unsafe(`drop database if exists ${name} with (force)`);
          await a.end();
        },
      });
    } catch (err) {
      log(`services mode skipped: ${String(err)}`);
    } finally {
      await admin.end({ timeout: 1 }).catch(() => {});
    }
  }
  return out;
}

interface PathResult extends Measured {
  jobs: number;
  failed: number;
}

/** Objects are stored and confirmed first (the outbox fills, nothing is dispatched); the clock runs from the dispatch to the last thumbnail recorded. */
async function workerPath(services: Services, caller: Caller, bucketId: string, files: { key: string; bytes: Buffer; contentType: string }[]): Promise<PathResult> {
  // --videos 0 (a machine without ffmpeg to make the clips): no poster batch.
  if (files.length === 0) return { perSecond: 0, cpuMs: 0, jobs: 0, failed: 0 };
  const { deps } = services;
  await services.outbox.stop();
  const kick = deps.jobs.kick;
  deps.jobs.kick = () => {};
  const ids: string[] = [];
  for (const f of files) {
    await deps.storage.put(objectPath(bucketId, f.key), f.bytes, { contentType: f.contentType });
    ids.push((await confirmUpload(deps, caller, { bucketId, key: f.key })).id);
  }
  deps.jobs.kick = kick;
  const started = new Date();
  const cpu = cpuNow();
  const threads = threadCpuNow();
  // Started again, not kicked: a stopped dispatcher ignores kicks.
  services.outbox.start();
  const settled = and(inArray(derivatives.objectId, ids), inArray(derivatives.state, ["ready", "failed", "unsupported"]));
  const wait = async () => {
    for (;;) {
      const [{ n } = { n: 0 }] = await deps.db.select({ n: count() }).from(derivatives).where(settled);
      if (n >= ids.length) break;
      // The clock stops at the last row's updated_at, not here: polling more often would only add
      // the bench's own queries (on the embedded database, CPU in this process) to the path's.
      await Bun.sleep(250);
    }
  };
  if (PROFILE) {
    const { profile } = await import("bun:jsc");
    const sampled = await profile(wait, 1000);
    console.error(`profile of the JavaScript thread over ${ids.length} jobs:\n${sampled.functions.split("\n").slice(0, Number(process.env.BENCH_PROFILE_LINES ?? 45)).join("\n")}`);
  } else await wait();
  const [{ last } = { last: null }] = await deps.db.select({ last: max(derivatives.updatedAt) }).from(derivatives).where(settled);
  const [{ failed } = { failed: 0 }] = await deps.db.select({ failed: count() }).from(derivatives).where(and(inArray(derivatives.objectId, ids), eq(derivatives.state, "failed")));
  const cpuMs = (cpuNow() - cpu) / ids.length;
  printThreads("worker path", threads, ids.length);
  const seconds = (last!.getTime() - started.getTime()) / 1000;
  return { perSecond: ids.length / seconds, cpuMs, jobs: ids.length, failed };
}

async function runBackend(b: Backend, photos: Buffer[], videos: Buffer[], afterBatch: () => Promise<void>): Promise<{ images: PathResult[]; posters: PathResult }> {
  const config = loadConfig({ ...b.env, STORAGE_PORT: "0", ...WORKER_ENV });
  const services = await createServices(config, { log: createLogger("warn") });
  try {
    const { deps } = services;
    const org = await deps.db.transaction((tx) => createOrganization(deps, tx, { name: "bench" }));
    await deps.db.update(orgUsage).set({ allocatedStorage: 1024 ** 4 }).where(eq(orgUsage.orgId, org.id));
    const caller: Caller = { orgId: org.id, userId: crypto.randomUUID(), apiKeyId: null, scopes: new Set(["admin"]), bucketId: null, principal: "bench" };
    const bucket = await createBucket(deps, caller, { name: "bench" });
    // Warm-up: connections, code paths, the embedded storage node.
    await workerPath(services, caller, bucket.id, photos.slice(0, 4).map((bytes, i) => ({ key: `warm/${i}.jpg`, bytes, contentType: "image/jpeg" })));
    await afterBatch();
    const images: PathResult[] = [];
    for (let batch = 0; batch < REPEAT; batch++) {
      const files = Array.from({ length: ROUNDS }, (_, r) => photos.map((bytes, i) => ({ key: `b${batch}/r${r}/photo-${i}.jpg`, bytes, contentType: "image/jpeg" }))).flat();
      images.push(await workerPath(services, caller, bucket.id, files));
      await afterBatch();
    }
    const posters = await workerPath(
      services,
      caller,
      bucket.id,
      [0, 1].flatMap((r) => videos.map((bytes, i) => ({ key: `v${r}/video-${i}.mp4`, bytes, contentType: "video/mp4" }))),
    );
    if (services.backends.queue === "bullmq") await (services.queue as BullQueue).obliterate();
    return { images, posters };
  } finally {
    await services.close();
  }
}

// ---- Run and report.

function versions(): Record<string, string> {
  const first = (cmd: string[]) => {
    try {
      return Bun.spawnSync(cmd).stdout.toString().split("\n")[0]!.trim();
    } catch {
      return "not installed";
    }
  };
  return {
    bun: Bun.version,
    sharp: `${sharp.versions.sharp} (libvips ${sharp.versions.vips})`,
    ffmpeg: first(["ffmpeg", "-version"]).replace(/^ffmpeg version (\S+).*/, "$1"),
    imagemagick: first([CONVERT, "-version"]).replace(/^Version: ImageMagick (\S+).*/, "$1"),
    postgres: first(["psql", "-V"]).replace(/^psql \(PostgreSQL\) /, ""),
    redis: first(["redis-server", "--version"]).replace(/.*v=(\S+).*/, "$1"),
  };
}

const { photos: photoPaths, videos: videoPaths } = await fixtures();
const photos = photoPaths.map((p) => readFileSync(p));
const videos = videoPaths.map((p) => readFileSync(p));
const meanPhoto = photos.reduce((n, b) => n + b.length, 0) / photos.length;
log(`fixtures: ${photos.length} photos 4000x3000 (mean ${(meanPhoto / 1e6).toFixed(2)} MB), ${videos.length} videos 1280x720 10 s`);

await bareSharp(photos.slice(0, 4)); // warm-up
const bareRuns: Measured[] = [await bareSharp(photos)];
log(`bare sharp: ${bareRuns[0]!.perSecond.toFixed(1)}/s, ${bareRuns[0]!.cpuMs.toFixed(1)} ms CPU each`);
const magick = await imageMagick(photoPaths, false);
const magickTuned = await imageMagick(photoPaths, true);
log(`convert: ${magick.toFixed(2)}/s, with jpeg:size hint ${magickTuned.toFixed(2)}/s`);
const posterBare = await barePosters(videoPaths);
log(`bare posters: ${posterBare.toFixed(2)}/s`);

// Other tenants of the machine come and go: every worker batch sits between two bare batches
// and is compared with their mean; the median of those ratios is reported.
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
interface PathSummary {
  name: string;
  perSecond: number;
  ratio: number;
  ratios: number[];
  cpuMs: number;
  posters: PathResult;
  failed: number;
}
const paths: PathSummary[] = [];
for (const b of await backends()) {
  try {
    log(`worker path: ${b.name}`);
    const marks: number[] = [];
    const result = await runBackend(b, photos, videos, async () => {
      bareRuns.push(await bareSharp(photos));
      marks.push(bareRuns.length - 1);
    });
    // marks[0] is the bare batch after the warm-up; batch i lies between marks[i] and marks[i + 1].
    const ratios = result.images.map((r, i) => r.perSecond / ((bareRuns[marks[i]!]!.perSecond + bareRuns[marks[i + 1]!]!.perSecond) / 2));
    const summary: PathSummary = {
      name: b.name,
      perSecond: median(result.images.map((r) => r.perSecond)),
      ratio: median(ratios),
      ratios,
      cpuMs: median(result.images.map((r) => r.cpuMs)),
      posters: result.posters,
      failed: result.images.reduce((n, r) => n + r.failed, 0) + result.posters.failed,
    };
    paths.push(summary);
    log(`  images ${result.images.map((r) => r.perSecond.toFixed(1)).join(", ")}/s, ratios ${ratios.map((r) => r.toFixed(2)).join(", ")}, ${summary.cpuMs.toFixed(1)} ms CPU each; posters ${result.posters.perSecond.toFixed(2)}/s`);
  } finally {
    await b.cleanup();
  }
}
const bareAll = median(bareRuns.map((r) => r.perSecond));
const bareCpu = median(bareRuns.map((r) => r.cpuMs));
const [load1] = loadavg();

const cpu = cpus()[0]?.model ?? "unknown CPU";
const v = versions();
const pct = (x: number, of: number) => `${Math.round((x / of) * 100)}%`;
const lines = [
  `## Thumbnails, ${new Date().toISOString().slice(0, 10)}`,
  "",
  `Machine: ${cpu}, ${cpus().length} cores, ${Math.round(totalmem() / 1024 ** 3)} GiB RAM, shared (load average ${load1!.toFixed(1)} when the run ended). Bun ${v.bun}, sharp ${v.sharp}, ffmpeg ${v.ffmpeg}, ImageMagick ${v.imagemagick}, PostgreSQL ${v.postgres}, Redis ${v.redis}.`,
  "",
  `Method: \`npx bun bench/thumbs.ts --images ${IMAGES} --rounds ${ROUNDS} --repeat ${REPEAT} --videos ${VIDEOS} --concurrency ${CONCURRENCY} --worker-concurrency ${WORKER_CONCURRENCY}\`. ${IMAGES} distinct 4000x3000 JPEGs (photo-like: smooth structure plus noise; mean ${(meanPhoto / 1e6).toFixed(2)} MB), each uploaded ${ROUNDS} times per batch (${IMAGES * ROUNDS} thumbnails per batch, ${REPEAT} batches per backend), and ${VIDEOS} 10 s 1280x720 H.264 clips uploaded twice. Every path makes the same thing by the same calls: a WebP thumbnail with a 320 px long edge and the image's metadata (\`renderKind\`: ${WORKER.nice > 0 ? `in the picture host process at WORKER_NICE=${WORKER.nice}${WORKER.schedIdle ? " in the idle scheduling class" : ""}, the default` : "in the process itself (WORKER_NICE=0)"}), the SHA-256 of its bytes, the thumbnail's placeholder and difference hash (\`thumbnailFacts\`), ${CONCURRENCY} at a time in the bare loops, WORKER_CONCURRENCY=${WORKER_CONCURRENCY} in the worker (${WORKER_CONCURRENCY} decoding at once, ${cpuJobsInHand(WORKER_CONCURRENCY)} jobs in hand: worker/cpu-slots.ts).`,
  "- *Worker path*: the objects are put in storage and confirmed first (the outbox fills; dispatching is held back), then the clock runs from the dispatch of the outbox to the last derivative row recorded: outbox -> queue -> processor (the source: for images up to 32 MiB the embedded store's own file of the version, read and hashed by the picture host, or a storage GET into memory from any other store; render; storage PUT) -> database. The embedded storage node runs in the same process in both modes (its PUT then goes to its store without HTTP: storage/local-s3/in-process.ts).",
  "- *Bare sharp*: the same calls on the JPEG bytes already in memory, in a loop, over the same photos. A bare batch runs before and after every worker batch; each worker batch is compared with the mean of its two neighbours, and the median of those ratios is reported (the machine's other load drifts; neighbours share it).",
  "- *CPU per thumbnail*: the CPU time (user + system) of this process and of its picture host child, divided by the thumbnails made. It depends much less on other load on the machine than throughput. Embedded mode has everything in these processes (database, queue, storage node, worker); the PostgreSQL + Redis mode leaves out the PostgreSQL and Redis servers' CPU.",
  "- *ImageMagick*: `convert photo.jpg -auto-orient -thumbnail 320x320 out.webp` per photo, and the same with `-define jpeg:size=640x640` (the hint that lets libjpeg shrink on load).",
  "- *Posters*: node-av (FFmpeg libraries in-process) picks a representative keyframe from 10% of the duration on, sharp makes the WebP thumbnail; bare loop (the same renderer, no queue, storage or database) versus the worker path.",
  "",
  "| path | thumbnails/s (median) | vs neighbouring bare batches (median; each batch) | CPU ms per thumbnail (median) |",
  "|---|---:|---:|---:|",
  `| bare sharp loop (batches: ${bareRuns.map((r) => r.perSecond.toFixed(1)).join(", ")}) | ${bareAll.toFixed(1)} | 100% | ${bareCpu.toFixed(1)} |`,
  ...paths.map((p) => `| worker path, ${p.name} | ${p.perSecond.toFixed(1)} | ${pct(p.ratio, 1)} (${p.ratios.map((r) => pct(r, 1)).join(", ")}) | ${p.cpuMs.toFixed(1)} |`),
  `| ImageMagick \`convert -thumbnail\` | ${magick.toFixed(2)} | ${pct(magick, bareAll)} | |`,
  `| ImageMagick with \`jpeg:size\` hint | ${magickTuned.toFixed(2)} | ${pct(magickTuned, bareAll)} | |`,
  "",
  ...(VIDEOS === 0
    ? ["Video posters: not run (`--videos 0`)."]
    : [
        "| video posters | per second |",
        "|---|---:|",
        `| bare loop (node-av + sharp) | ${posterBare.toFixed(2)} |`,
        ...paths.map((p) => `| worker path, ${p.name} | ${p.posters.perSecond.toFixed(2)} |`),
      ]),
  "",
  `Failed jobs: ${paths.reduce((n, p) => n + p.failed, 0)}.`,
  "",
  `Verdict (raw): worker path ${paths.map((p) => `${pct(p.ratio, 1)} (${p.name.split(" (")[0]})`).join(", ")} of the bare loop in throughput (goal >= 85%), CPU efficiency (bare CPU / worker CPU per thumbnail) ${paths.map((p) => `${pct(bareCpu, p.cpuMs)} (${p.name.split(" (")[0]})`).join(", ")}; ours ${(Math.min(...paths.map((p) => p.perSecond)) / magick).toFixed(1)}x to ${(Math.max(...paths.map((p) => p.perSecond)) / magick).toFixed(1)}x ImageMagick's plain \`convert\` (goal >= 4x).`,
  "",
];
process.stdout.write(`${lines.join("\n")}\n`);
// The analysis (bench/notes/) is written by hand; a run replaces only bench/results/thumbs.md.
if (!process.env.BENCH_NO_WRITE) {
  const [, ...body] = lines;
  writeSection("thumbs", [`## thumbs, latest run (${new Date().toISOString().slice(0, 10)}; written by \`npm run bench -- thumbs\`)`, ...body].join("\n"));
}
