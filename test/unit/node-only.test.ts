import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fadeInMp4, mp3, pdf, wav } from "../support/media-files.ts";

const dir = mkdtempSync(join(tmpdir(), "node-only-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The promise of `npm install && npm start` on a machine with only Node: video posters,
 * waveforms and PDF pages come from npm packages, never from ffmpeg, ffprobe, pdftoppm or
 * pdfinfo. Proved by running the renderers in a process whose PATH holds nothing but bun, so
 * no system tool could be found even where one is installed.
 */
test("video, audio and PDF thumbnails and facts with no system media tool on PATH", async () => {
  const bin = join(dir, "bin");
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, "bun"));
  const files = { video: join(dir, "clip.mp4"), audio: join(dir, "tone.mp3"), sound: join(dir, "tone.wav"), pdf: join(dir, "doc.pdf") };
  writeFileSync(files.video, await fadeInMp4(1, 2));
  writeFileSync(files.audio, await mp3(1));
  writeFileSync(files.sound, await wav(1));
  writeFileSync(files.pdf, pdf(2));
  const root = resolve(import.meta.dir, "../..");
  const script = join(dir, "render.ts");
  writeFileSync(
    script,
    `
    import { videoRenderer } from ${JSON.stringify(`${root}/worker/derivatives/video.ts`)};
    import { audioRenderer } from ${JSON.stringify(`${root}/worker/derivatives/audio.ts`)};
    import { pdfRenderer } from ${JSON.stringify(`${root}/worker/derivatives/pdf.ts`)};
    const base = { dir: ${JSON.stringify(dir)}, limits: { maxPixels: 1e8 }, timeoutMs: 30000 };
    const out = {};
    for (const [name, renderer, file, type] of [
      ["video", videoRenderer, ${JSON.stringify(files.video)}, "video/mp4"],
      ["audio", audioRenderer, ${JSON.stringify(files.audio)}, "audio/mpeg"],
      ["sound", audioRenderer, ${JSON.stringify(files.sound)}, "audio/wav"],
      ["pdf", pdfRenderer, ${JSON.stringify(files.pdf)}, "application/pdf"],
    ]) {
      const r = await renderer.render({ ...base, file, contentType: type });
      out[name] = { width: r.thumbnail.width, height: r.thumbnail.height, info: r.info };
    }
    console.log(JSON.stringify({ path: process.env.PATH, which: ["ffmpeg", "ffprobe", "pdftoppm", "pdfinfo"].map((t) => Bun.which(t)), out }));
    `,
  );
  const proc = Bun.spawn([join(bin, "bun"), script], { cwd: root, env: { PATH: bin, HOME: dir }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr: stderr.slice(0, 2000) }).toEqual({ code: 0, stderr: "" });
  const result = JSON.parse(stdout);
  expect(result.path).toBe(bin);
  expect(result.which).toEqual([null, null, null, null]);
  expect(result.out.video).toMatchObject({ width: 320, height: 240, info: { videoCodec: "h264", duration: 3, width: 320, height: 240 } });
  expect(result.out.video.info.posterAt).toBeGreaterThanOrEqual(1);
  expect(result.out.audio).toMatchObject({ width: 320, height: 80, info: { audioCodec: "mp3", channels: 1 } });
  expect(result.out.sound).toMatchObject({ width: 320, height: 80, info: { audioCodec: "pcm_s16le", duration: 1 } });
  expect(result.out.pdf).toMatchObject({ width: 247, height: 320, info: { pages: 2, pageWidth: 612, pageHeight: 792 } });
}, 60_000);
