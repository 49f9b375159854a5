/**
 * `npm run bench -- media`: the derivatives that are not photos, and on-the-fly renders.
 *
 * - Video posters, PDF first pages and audio waveforms: the worker's npm path (node-av, pdf.js)
 *   against Debian's command-line tools (ffprobe + ffmpeg, pdfinfo + pdftoppm) doing the same
 *   job, each followed by the same sharp thumbnail. Files per second, CONCURRENCY at a time.
 * - Renders over HTTP: a cached render (signed URL and the authenticated route) against a bare
 *   `Bun.serve` answering the same bytes from a file, and uncached renders (a new size each
 *   request) against a bare sharp loop making the same renders from bytes in memory.
 *
 * Options: --seconds N (per HTTP run, 5) --clients N (concurrent HTTP clients, 8)
 * --concurrency N (2) --files N (per derivative kind, 6). Prints a Markdown section and writes
 * it to bench/results/media.md unless BENCH_NO_WRITE is set.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import sharp from "sharp";
import { loadConfig } from "../app/config.ts";
import { createHttpApp } from "../app/http.ts";
import { createLogger } from "../app/log.ts";
import { createServices } from "../app/services.ts";
import { renderParams } from "../contract/render.ts";
import { memberships, orgUsage, users } from "../db/schema/index.ts";
import type { Caller } from "../domain/access/caller.ts";
import { createOrganization } from "../domain/access/organizations.ts";
import { createBucket } from "../domain/buckets/buckets.ts";
import { THUMBNAIL_EDGE } from "../domain/derivatives/derivatives.ts";
import { loadMediaView } from "../domain/media/media.ts";
import { signRenderUrl } from "../domain/derivatives/render-urls.ts";
import { objectPath } from "../domain/media/storage-keys.ts";
import { confirmUpload } from "../domain/media/uploads.ts";
import { audioRenderer } from "../worker/derivatives/audio.ts";
import { pdfRenderer } from "../worker/derivatives/pdf.ts";
import { renderThumbnail } from "../worker/derivatives/render.ts";
import { sharpTransformer } from "../worker/derivatives/transform.ts";
import { videoRenderer } from "../worker/derivatives/video.ts";
import { pdfFile } from "../test/support/pdf-file.ts";
import { median, percentile, writeSection } from "./_load.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const SECONDS = Number(args.get("seconds") ?? 5);
const CLIENTS = Number(args.get("clients") ?? 8);
const CONCURRENCY = Number(args.get("concurrency") ?? 2);
const FILES = Number(args.get("files") ?? 6);
const LIMITS = { maxPixels: 200_000_000 };
const log = (line: string) => process.stderr.write(`${line}\n`);
const work = join(import.meta.dir, ".work");
mkdirSync(work, { recursive: true });

function run(cmd: string[]): Buffer {
  const p = Bun.spawnSync(cmd, { stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`${cmd[0]} failed: ${p.stderr.toString().slice(0, 300)}`);
  return p.stdout;
}

/** A tool run as the worker ran them: a child process awaited, so several run at once. */
async function tool(cmd: string[]): Promise<Buffer> {
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).arrayBuffer(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`${cmd[0]} failed: ${err.slice(0, 300)}`);
  return Buffer.from(out);
}
const has = (tool: string) => Bun.which(tool) !== null;

// ---- Fixtures (made with ffmpeg once, kept in bench/.work).

function fixture(name: string, make: (path: string) => void): string {
  const path = join(work, name);
  if (!existsSync(path)) make(path);
  return path;
}

/** A text-heavy PDF: `pages` pages of 60 lines of Helvetica and a few shapes, as reports are. */
function reportPdf(pages: number): Buffer {
  const objects: string[] = ["<< /Type /Catalog /Pages 2 0 R >>", ""];
  const kids: string[] = [];
  const font = 3;
  objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  for (let p = 0; p < pages; p++) {
    let content = "0.9 0.9 0.95 rg 40 700 532 60 re f 0.2 0.3 0.6 RG 2 w 40 690 m 572 690 l S BT /F1 20 Tf 0 0 0 rg 50 720 Td (Quarterly report, page " + (p + 1) + ") Tj ET\n";
    for (let l = 0; l < 60; l++) content += `BT /F1 9 Tf 50 ${670 - l * 10} Td (Line ${l + 1}: revenue grew in every region while costs stayed flat; see table ${l % 7} for details.) Tj ET\n`;
    content += "0.8 0.3 0.2 rg 400 80 120 40 re f";
    const pageId = objects.length + 1;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${pageId + 1} 0 R >>`);
    objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
    kids.push(`${pageId} 0 R`);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.join(" ")}] /Count ${pages} >>`;
  return pdfFile(objects);
}

const videos = Array.from({ length: FILES }, (_, i) =>
  fixture(`media-video-${i}.mp4`, (path) =>
    run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", `testsrc2=duration=10:size=1280x720:rate=30,hue=h=${i * 40}`, "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast", "-g", "60", "-y", path]),
  ),
);
const songs = Array.from({ length: FILES }, (_, i) =>
  fixture(`media-song-${i}.mp3`, (path) =>
    run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", `anoisesrc=d=180:c=pink:a=0.3:seed=${i},volume='0.5+0.5*sin(t/3)':eval=frame`, "-ac", "2", "-ar", "44100", "-c:a", "libmp3lame", "-b:a", "128k", "-y", path]),
  ),
);
const pdfs = Array.from({ length: FILES }, (_, i) => fixture(`media-report-${i}.pdf`, (path) => writeFileSync(path, reportPdf(8 + i))));

// ---- Derivatives: npm path against the command-line tools.

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
  return items.length / ((performance.now() - started) / 1000);
}

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "bench-media-"));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ctx = (file: string, dir: string, contentType: string) => ({ file, dir, contentType, limits: LIMITS, timeoutMs: 120_000 });
let seq = 0;

const derivativeRows: { kind: string; npm: number; cli: number | null; note: string }[] = [];

async function measureDerivatives() {
  const twice = <T>(xs: T[]) => [...xs, ...xs];
  await withDir(async (dir) => {
    await videoRenderer.render(ctx(videos[0]!, dir, "video/mp4")); // warm-up (loads node-av)
    const npm = await pool(twice(videos), CONCURRENCY, (f) => videoRenderer.render(ctx(f, dir, "video/mp4")));
    const cli = has("ffmpeg")
      ? await pool(twice(videos), CONCURRENCY, async (f) => {
          const probe = JSON.parse((await tool(["ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams", f])).toString());
          const at = Math.round(Number(probe.format.duration) * 100) / 1000;
          const out = join(dir, `poster-${seq++}.png`);
          await tool(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-ss", String(at), "-noaccurate_seek", "-i", f, "-map", "0:v:0", "-frames:v", "1", "-vf", "scale='min(1280,iw)':'min(1280,ih)':force_original_aspect_ratio=decrease", "-update", "1", "-compression_level", "1", "-y", out]);
          await renderThumbnail(out, THUMBNAIL_EDGE, LIMITS);
        })
      : null;
    derivativeRows.push({ kind: "video poster (10 s 1280x720 H.264)", npm, cli, note: "npm: node-av probe, up to 5 keyframes tried for a representative one (1 here), thumbnail; CLI: ffprobe + ffmpeg keyframe at 10% (each a child process, as the worker ran them before) + thumbnail" });
    log(`posters: npm ${npm.toFixed(2)}/s, CLI ${cli?.toFixed(2)}/s`);

    await pdfRenderer.render(ctx(pdfs[0]!, dir, "application/pdf"));
    const pdfNpm = await pool(twice(pdfs), CONCURRENCY, (f) => pdfRenderer.render(ctx(f, dir, "application/pdf")));
    const pdfCli = has("pdftoppm")
      ? await pool(twice(pdfs), CONCURRENCY, async (f) => {
          await tool(["pdfinfo", "-enc", "UTF-8", f]);
          const prefix = join(dir, `page-${seq++}`);
          await tool(["pdftoppm", "-f", "1", "-l", "1", "-png", "-scale-to", String(THUMBNAIL_EDGE), "-singlefile", f, prefix]);
          await renderThumbnail(`${prefix}.png`, THUMBNAIL_EDGE, LIMITS);
        })
      : null;
    derivativeRows.push({ kind: "PDF first page (8-13 text pages)", npm: pdfNpm, cli: pdfCli, note: "npm: pdf.js + @napi-rs/canvas draws the page at 320 px, page count, size, title; CLI: pdfinfo + pdftoppm at 320 px; each + the thumbnail" });
    log(`pdf: npm ${pdfNpm.toFixed(2)}/s, CLI ${pdfCli?.toFixed(2)}/s`);

    await audioRenderer.render(ctx(songs[0]!, dir, "audio/mpeg"));
    const audioNpm = await pool(twice(songs), CONCURRENCY, (f) => audioRenderer.render(ctx(f, dir, "audio/mpeg")));
    const audioCli = has("ffmpeg")
      ? await pool(twice(songs), CONCURRENCY, async (f) => {
          await tool(["ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams", f]);
          const out = join(dir, `wave-${seq++}.png`);
          await tool(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-i", f, "-filter_complex", "[0:a:0]aformat=channel_layouts=mono,showwavespic=s=640x160:colors=0x3b82f6", "-frames:v", "1", "-update", "1", "-y", out]);
          await renderThumbnail(out, THUMBNAIL_EDGE, LIMITS);
        })
      : null;
    derivativeRows.push({ kind: "audio waveform (3 min MP3)", npm: audioNpm, cli: audioCli, note: "npm: node-av's decoder called directly in 15 ms slices, peaks in JS, drawn with sharp; CLI: ffprobe + ffmpeg showwavespic" });
    log(`waveforms: npm ${audioNpm.toFixed(2)}/s, CLI ${audioCli?.toFixed(2)}/s`);
  });
}

// ---- Renders over HTTP.

interface Load {
  rps: number;
  p50: number;
  p99: number;
}

/** CLIENTS loops requesting `url()` for SECONDS; every answer must be 200 with a body. */
async function load(url: () => string, headers: Record<string, string> = {}, seconds = SECONDS): Promise<Load> {
  const lat: number[] = [];
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const res = await fetch(url(), { headers });
        const body = await res.arrayBuffer();
        if (res.status !== 200 || body.byteLength === 0) throw new Error(`${res.status} ${new TextDecoder().decode(body).slice(0, 200)}`);
        lat.push(performance.now() - t);
      }
    }),
  );
  return { rps: lat.length / ((performance.now() - started) / 1000), p50: median(lat), p99: percentile(lat, 99) };
}

const renderRows: { name: string; result: Load; baseline: string; ratio: number }[] = [];

async function measureRenders() {
  const dir = mkdtempSync(join(tmpdir(), "bench-render-"));
  // Limits raised: the bench measures what one organization's renders cost, not what its budget allows.
  const config = loadConfig({ DATA_DIR: dir, STORAGE_PORT: "0", LOG_LEVEL: "warn", RATE_LIMIT_PER_MINUTE: "100000000", ORG_RENDER_MS_PER_SECOND: "0" });
  const services = await createServices(config, { log: createLogger("warn") });
  const app = createHttpApp(services).listen({ hostname: "127.0.0.1", port: 0 });
  const base = `http://127.0.0.1:${app.server!.port}`;
  const photo = await sharp({ create: { width: 3000, height: 2000, channels: 3, background: { r: 40, g: 120, b: 200 } } })
    .composite([{ input: await sharp({ create: { width: 1500, height: 1000, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 40 } } }).png().toBuffer(), top: 500, left: 750 }])
    .jpeg({ quality: 85 })
    .toBuffer();
  try {
    const { deps } = services;
    const org = await deps.db.transaction((tx) => createOrganization(deps, tx, { name: "bench" }));
    await deps.db.update(orgUsage).set({ allocatedStorage: 1024 ** 4 }).where(eq(orgUsage.orgId, org.id));
    const [user] = await deps.db.insert(users).values({ email: "bench@example.test" }).returning({ id: users.id });
    await deps.db.insert(memberships).values({ orgId: org.id, userId: user!.id, role: "owner" });
    const caller: Caller = { orgId: org.id, userId: user!.id, apiKeyId: null, scopes: new Set(["admin"]), bucketId: null, principal: "bench" };
    const bucket = await createBucket(deps, caller, { name: "bench" });
    await deps.storage.put(objectPath(bucket.id, "photo.jpg"), photo, { contentType: "image/jpeg" });
    const object = await confirmUpload(deps, caller, { bucketId: bucket.id, key: "photo.jpg" });
    for (let i = 0; i < 400 && (await loadMediaView(deps, caller, object.id)).thumbnail?.state !== "ready"; i++) await Bun.sleep(50);
    const params = renderParams.parse({ width: 640, format: "webp" });
    const signed = await signRenderUrl(deps, caller, object.id, params, 86_400);
    const signedUrl = `${base}${signed.path}`;
    const first = await fetch(signedUrl);
    const bytes = Buffer.from(await first.arrayBuffer());
    const staticFile = join(dir, "render.webp");
    writeFileSync(staticFile, bytes);
    const bare = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(Bun.file(staticFile), { headers: { "content-type": "image/webp" } }) });
    const key = (await (await import("../domain/access/api-keys.ts")).createApiKey(deps, caller, { name: "bench", scopes: ["read"], expiresInDays: 1 })) as { secret: string };
    const auth = { authorization: `Bearer ${key.secret}` };
    try {
      await load(() => signedUrl, {}, 1);
      await load(() => `http://127.0.0.1:${bare.port}/render.webp`, {}, 1);
      const staticRun = await load(() => `http://127.0.0.1:${bare.port}/render.webp`);
      const cachedSigned = await load(() => signedUrl);
      const cachedAuth = await load(() => `${base}/api/media/${object.id}/render?width=640&format=webp`, auth);
      const staticAgain = await load(() => `http://127.0.0.1:${bare.port}/render.webp`);
      const staticRps = (staticRun.rps + staticAgain.rps) / 2;
      renderRows.push({ name: `bare \`Bun.serve\` answering the same ${bytes.byteLength} bytes from a file`, result: { ...staticRun, rps: staticRps }, baseline: "", ratio: 1 });
      renderRows.push({ name: "cached render, signed URL (`GET /api/render/{id}?...&signature=`)", result: cachedSigned, baseline: "static", ratio: cachedSigned.rps / staticRps });
      renderRows.push({ name: "cached render, authenticated route (`GET /api/media/{id}/render`)", result: cachedAuth, baseline: "static", ratio: cachedAuth.rps / staticRps });
      log(`static ${staticRps.toFixed(0)}/s, cached signed ${cachedSigned.rps.toFixed(0)}/s, cached auth ${cachedAuth.rps.toFixed(0)}/s`);

      // Uncached: a size never asked before on every request; the bare loop makes the same renders.
      // Both make the same sizes, 700 px and up (past the cached 640), one new size per render.
      let width = 700;
      const transform = { fit: "inside" as const, format: "webp" as const, quality: 80, gravity: "center", metadata: "exif-without-location" as const };
      const bareFrom = width;
      const bareRun = await (async () => {
        let w = 0;
        const started = performance.now();
        let n = 0;
        const end = started + SECONDS * 1000;
        await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
          while (performance.now() < end) {
            await sharpTransformer.transform(photo, { ...transform, width: bareFrom + (w++ % 100) }, LIMITS);
            n++;
          }
        }));
        return n / ((performance.now() - started) / 1000);
      })();
      width = 700;
      const saved = CLIENTS;
      const uncached = await (async () => {
        const lat: number[] = [];
        const started = performance.now();
        const end = started + SECONDS * 1000;
        await Promise.all(Array.from({ length: Math.min(saved, CONCURRENCY) }, async () => {
          while (performance.now() < end) {
            const t = performance.now();
            const res = await fetch(`${base}/api/media/${object.id}/render?width=${width++}&format=webp`, { headers: auth });
            if (res.headers.get("x-render-cache") !== "miss") throw new Error("expected a miss");
            await res.arrayBuffer();
            lat.push(performance.now() - t);
          }
        }));
        return { rps: lat.length / ((performance.now() - started) / 1000), p50: median(lat), p99: percentile(lat, 99) };
      })();
      renderRows.push({ name: `bare sharp loop: the same renders (3000x2000 JPEG to a new width, 700 to 800 px, WebP), ${CONCURRENCY} at a time`, result: { rps: bareRun, p50: Number.NaN, p99: Number.NaN }, baseline: "", ratio: 1 });
      renderRows.push({ name: `uncached render, authenticated route, ${CONCURRENCY} clients (storage GET of the original, render, storage PUT, cache row, trim)`, result: uncached, baseline: "bare sharp", ratio: uncached.rps / bareRun });
      log(`bare sharp ${bareRun.toFixed(1)}/s, uncached ${uncached.rps.toFixed(1)}/s`);
    } finally {
      bare.stop(true);
    }
  } finally {
    app.stop();
    await services.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await measureDerivatives();
await measureRenders();

const [load1] = loadavg();
const ffmpegVersion = has("ffmpeg") ? run(["ffmpeg", "-version"]).toString().split("\n")[0]!.replace(/^ffmpeg version (\S+).*/, "$1") : "absent";
const f = (n: number | null | undefined, d = 2) => (n == null || Number.isNaN(n) ? "" : n.toFixed(d));
const lines = [
  `## media, latest run (${new Date().toISOString().slice(0, 10)}; written by \`npm run bench -- media\`)`,
  "",
  `Machine: ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores, ${Math.round(totalmem() / 1024 ** 3)} GiB, shared (load average ${load1!.toFixed(1)} when the run ended). Bun ${Bun.version}, node-av (FFmpeg 8.1 libraries), pdfjs-dist, @napi-rs/canvas, sharp ${sharp.versions.sharp}; Debian ffmpeg ${ffmpegVersion}, poppler-utils for the CLI rows.`,
  "",
  `Method: \`npm run bench -- media --files ${FILES} --concurrency ${CONCURRENCY} --clients ${CLIENTS} --seconds ${SECONDS}\`. Derivatives: ${FILES} files of each kind, each processed twice, ${CONCURRENCY} at a time, by the worker's renderer (npm) and by the command-line tools the worker used before (CLI), each ending in the same sharp WebP thumbnail.`,
  "",
  "| derivative | npm path, files/s | CLI tools, files/s | npm / CLI | what each does |",
  "|---|---:|---:|---:|---|",
  ...derivativeRows.map((r) => `| ${r.kind} | ${f(r.npm)} | ${r.cli === null ? "tools absent" : f(r.cli)} | ${r.cli ? `${Math.round((r.npm / r.cli) * 100)}%` : ""} | ${r.note} |`),
  "",
  `Renders: the embedded server (PGlite, embedded storage node) in this process, ${CLIENTS} concurrent clients in this process for ${SECONDS} s per row (uncached: ${CONCURRENCY}), a 3000x2000 JPEG rendered to 640 px WebP. The static baseline ran before and after the cached rows; its mean is shown.`,
  "",
  "| path | req/s | p50 ms | p99 ms | vs baseline |",
  "|---|---:|---:|---:|---:|",
  ...renderRows.map((r) => `| ${r.name} | ${f(r.result.rps, 1)} | ${f(r.result.p50)} | ${f(r.result.p99)} | ${r.baseline ? `${Math.round(r.ratio * 100)}% of ${r.baseline}` : "baseline"} |`),
  "",
];
process.stdout.write(`${lines.join("\n")}\n`);
if (!process.env.BENCH_NO_WRITE) writeSection("media", lines.join("\n"));
process.exit(0);
