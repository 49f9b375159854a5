import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { MediaError, Unsupported } from "../../worker/derivatives/errors.ts";
import { imageRenderer } from "../../worker/derivatives/image.ts";
import { audioRenderer, drawWaveform } from "../../worker/derivatives/audio.ts";
import { pdfRenderer, readPdf } from "../../worker/derivatives/pdf.ts";
import { renderCover, renderThumbnail } from "../../worker/derivatives/render.ts";
import { videoRenderer } from "../../worker/derivatives/video.ts";
import { bombPng, dimensions, fadeInMp4, mp3, mp4, orientedJpeg, pdf, png, rotatedMp4, wav } from "../support/media-files.ts";

const limits = { maxPixels: 50_000_000 };
const dir = mkdtempSync(join(tmpdir(), "render-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("renderThumbnail", () => {
  test("long edge 320, aspect kept, never enlarged, WebP without metadata", async () => {
    for (const [w, h, ew, eh] of [[1000, 500, 320, 160], [500, 1000, 160, 320], [100, 40, 100, 40]] as const) {
      const out = await renderThumbnail(await png(w, h), 320, limits);
      expect([out.width, out.height]).toEqual([ew, eh]);
      expect(await dimensions(out.bytes)).toEqual({ width: ew, height: eh, format: "webp" });
    }
  });
  test("EXIF orientation is applied: a 400x200 JPEG marked 6 comes out 160x320", async () => {
    const out = await renderThumbnail(await orientedJpeg(400, 200), 320, limits);
    expect([out.width, out.height]).toEqual([160, 320]);
    // no EXIF (camera, GPS, orientation) travels with the thumbnail
    const meta = await sharp(out.bytes).metadata();
    expect(meta.exif).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
  });
  test("a decompression bomb is refused before decoding, with a reason a user understands", async () => {
    const bomb = bombPng(100_000, 100_000);
    expect(bomb.length).toBeLessThan(20_000);
    const started = performance.now();
    const err = await renderThumbnail(bomb, 320, limits).catch((e) => e);
    expect(err).toBeInstanceOf(MediaError);
    expect(err.message).toBe("The image has more than 50 megapixels, the limit for thumbnails");
    expect(performance.now() - started).toBeLessThan(1000);
  });
  test("truncated and non-image bytes fail with a MediaError", async () => {
    const whole = await png(300, 300);
    for (const bad of [whole.subarray(0, whole.length / 2), Buffer.from("hello")]) {
      const err = await renderThumbnail(bad, 320, limits).catch((e) => e);
      expect(err).toBeInstanceOf(MediaError);
      expect(err.message).toStartWith("The image could not be decoded");
    }
  });
});

describe("renderCover (set variants)", () => {
  test("exactly the requested size, whatever the source's aspect, from a path or bytes", async () => {
    const path = join(dir, "wide.png");
    writeFileSync(path, await png(1200, 400));
    for (const [input, size] of [[path, { width: 300, height: 300 }], [await png(400, 1200), { width: 640, height: 360 }]] as const) {
      const out = await renderCover(input, size, limits);
      expect(await dimensions(out)).toEqual({ ...size, format: "webp" });
    }
    expect((await dimensions(await renderCover(path, { width: 50, height: 80 }, { ...limits, format: "jpeg" }))).format).toBe("jpeg");
  });
});

describe("image renderer", () => {
  test("takes the file on disk as well as bytes in memory (images over 32 MiB come as files)", async () => {
    const path = join(dir, "big.jpg");
    writeFileSync(path, await orientedJpeg(400, 200));
    const fromFile = await imageRenderer.render({ file: path, dir, contentType: "image/jpeg", limits, timeoutMs: 30_000 });
    const fromBytes = await imageRenderer.render({ file: "", bytes: await Bun.file(path).bytes().then(Buffer.from), dir: "", contentType: "image/jpeg", limits, timeoutMs: 30_000 });
    expect([fromFile.thumbnail.width, fromFile.thumbnail.height]).toEqual([160, 320]);
    expect(fromBytes.thumbnail.bytes.equals(fromFile.thumbnail.bytes)).toBe(true);
    expect(fromFile.info).toEqual(fromBytes.info);
  });
  test("image types sharp cannot read here are unsupported, not failed", async () => {
    const err = await imageRenderer.render({ file: "", bytes: Buffer.from("x"), dir: "", contentType: "image/heic", limits, timeoutMs: 30_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(Unsupported);
    expect(err.message).toBe("No thumbnail is made for image/heic images");
  });
});

const ctx = (file: string, contentType: string, timeoutMs = 30_000) => ({ file, dir, contentType, limits, timeoutMs });
const write = async (name: string, bytes: Buffer | Promise<Buffer>) => {
  const file = join(dir, name);
  writeFileSync(file, await bytes);
  return file;
};

/** Mean luma of a thumbnail's pixels, 0..255. */
async function brightness(bytes: Buffer): Promise<number> {
  const { channels } = await sharp(bytes).stats();
  return channels.slice(0, 3).reduce((sum, c) => sum + c.mean, 0) / 3;
}

describe("video posters (node-av, no ffmpeg on the machine)", () => {
  test("a video recorded turned a quarter gives an upright poster and display dimensions", async () => {
    const out = await videoRenderer.render(ctx(await write("turned.mp4", rotatedMp4(90)), "video/mp4"));
    expect([out.thumbnail.width, out.thumbnail.height]).toEqual([240, 320]);
    expect(out.info).toMatchObject({ width: 240, height: 320, rotation: 90, duration: 1, videoCodec: "h264", frameRate: 25 });
  });
  test("the poster is a representative frame: a video opening on black gets a later keyframe, not a black one", async () => {
    const out = await videoRenderer.render(ctx(await write("fade.mp4", fadeInMp4(2, 4)), "video/mp4"));
    // 10% of 6 s is in the black opening; the first frame that shows something is at 2 s or later.
    expect(out.info.posterAt as number).toBeGreaterThanOrEqual(2);
    expect(await brightness(out.thumbnail.bytes)).toBeGreaterThan(40);
    expect(out.info).toMatchObject({ width: 320, height: 240, duration: 6, videoCodec: "h264" });
    expect(typeof out.info.bitRate).toBe("number");
  });
  test("an ordinary video's poster is taken near 10% of the duration", async () => {
    const out = await videoRenderer.render(ctx(await write("plain.mp4", mp4(10)), "video/mp4"));
    expect(out.info.posterAt).toBe(1);
    expect([out.thumbnail.width, out.thumbnail.height]).toEqual([320, 240]);
  });
  test("bytes that are no video fail with a reason for the user", async () => {
    const err = await videoRenderer.render(ctx(await write("junk.mp4", Buffer.from("not a video at all".repeat(100))), "video/mp4")).catch((e) => e);
    expect(err).toBeInstanceOf(MediaError);
    expect(err.message).toStartWith("The file could not be read as audio or video");
    expect(err.message).not.toContain(dir);
  });
  test("an MP4 with only sound gets a waveform", async () => {
    const out = await videoRenderer.render(ctx(await write("sound.wav", wav(1)), "video/mp4"));
    expect([out.thumbnail.width, out.thumbnail.height]).toEqual([320, 80]);
    expect(out.info).toMatchObject({ audioCodec: "pcm_s16le", channels: 1, sampleRate: 44100 });
  });
});

describe("audio waveforms (node-av)", () => {
  test("an MP3 gets a 320 x 80 waveform and its facts, tags included", async () => {
    const out = await audioRenderer.render(ctx(await write("tone.mp3", mp3(3)), "audio/mpeg"));
    expect([out.thumbnail.width, out.thumbnail.height]).toEqual([320, 80]);
    expect(out.info).toMatchObject({ audioCodec: "mp3", channels: 1, sampleRate: 44100, title: "Tone", artist: "Test Signal" });
    expect(out.info.duration as number).toBeCloseTo(3, 0);
    expect(out.info.bitRate as number).toBeGreaterThan(30_000);
  });
  test("the waveform is as loud as the sound: a steady tone fills the same height across the picture", async () => {
    const peaks = new Float32Array(640).fill(0.5);
    const png = await drawWaveform(peaks);
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    const drawn = (x: number) => Array.from({ length: info.height }, (_, y) => data[(y * info.width + x) * 4 + 3]!).filter((a) => a > 0).length;
    expect(drawn(10)).toBe(drawn(600));
    expect(drawn(10)).toBeGreaterThan(info.height * 0.45);
    expect(drawn(10)).toBeLessThan(info.height * 0.6);
  });
});

describe("PDF pages (pdf.js, no poppler on the machine)", () => {
  test("the first page, its size in points, the page count, title and author", async () => {
    const bytes = pdf(3, 612, 792, { title: "Annual report", author: "Someone" });
    for (const input of [{ ...ctx("", "application/pdf"), bytes }, ctx(await write("doc.pdf", bytes), "application/pdf")]) {
      const out = await pdfRenderer.render(input);
      expect([out.thumbnail.width, out.thumbnail.height]).toEqual([247, 320]);
      expect(out.info).toEqual({ pages: 3, pageWidth: 612, pageHeight: 792, title: "Annual report", author: "Someone" });
    }
  });
  test("what pdf.js draws is the page: white paper with the blue rectangle in its lower third", async () => {
    const { page } = await readPdf(pdf(1, 600, 600), { edge: 300, timeoutMs: 60_000 });
    expect(page).toMatchObject({ width: 300, height: 300, channels: 4 });
    const at = (x: number, y: number) => Array.from(page!.data.subarray((y * 300 + x) * 4, (y * 300 + x) * 4 + 3));
    expect(at(5, 5)).toEqual([255, 255, 255]);
    expect(at(150, 250)).toEqual([51, 102, 204]);
  });
  test("bytes that are no PDF fail with a reason for the user", async () => {
    const err = await pdfRenderer.render({ ...ctx("", "application/pdf"), bytes: Buffer.from("%PDF-1.4 nothing else") }).catch((e) => e);
    expect(err).toBeInstanceOf(MediaError);
    expect(err.message).toMatch(/^The (file is not a valid PDF|PDF could not be read)/);
  });
});

describe("WORKER_TOOL_TIMEOUT_MS", () => {
  // pdf.js continues in microtasks, where a timer never fires: without a look at the clock after
  // each step, a PDF ran to its end whatever the budget.
  test("a PDF that takes longer than the budget is stopped, with a reason for the user", async () => {
    const err = await pdfRenderer.render({ ...ctx("", "application/pdf", 5), bytes: pdf(3000) }).catch((e) => e);
    expect(err).toBeInstanceOf(MediaError);
    expect(err.message).toMatch(/^Reading the PDF took longer than \d+ s and was stopped$/);
  });
  test("so are a video and an audio file", async () => {
    // Long enough to outlast a 1 ms budget by far, short enough to make quickly (a 20 s video and
    // two minutes of sound took 7 s to encode). The sound stays two minutes: the clock is read
    // once per 15 ms slice, and 30 s of it were decoded in less than one slice on a quiet machine.
    const video = await videoRenderer.render(ctx(await write("budget.mp4", mp4(3, "640x480")), "video/mp4", 1)).catch((e) => e);
    expect(video.message).toMatch(/^Reading the video took longer than \d+ s and was stopped$/);
    const audio = await audioRenderer.render(ctx(await write("budget.mp3", mp3(120)), "audio/mpeg", 1)).catch((e) => e);
    expect(audio.message).toMatch(/^Reading the audio took longer than \d+ s and was stopped$/);
  });
});
