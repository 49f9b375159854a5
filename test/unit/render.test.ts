import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { MediaError, Unsupported } from "../../worker/derivatives/errors.ts";
import { imageRenderer } from "../../worker/derivatives/image.ts";
import { findExecutable, runTool } from "../../worker/derivatives/exec.ts";
import { renderCover, renderThumbnail } from "../../worker/derivatives/render.ts";
import { videoRenderer } from "../../worker/derivatives/video.ts";
import { bombPng, dimensions, orientedJpeg, png, rotatedMp4 } from "../support/media-files.ts";

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
    const fromFile = await imageRenderer.render({ file: path, dir, contentType: "image/jpeg", limits, timeoutMs: 1000, tools: {} });
    const fromBytes = await imageRenderer.render({ file: "", bytes: await Bun.file(path).bytes().then(Buffer.from), dir: "", contentType: "image/jpeg", limits, timeoutMs: 1000, tools: {} });
    expect([fromFile.thumbnail.width, fromFile.thumbnail.height]).toEqual([160, 320]);
    expect(fromBytes.thumbnail.bytes.equals(fromFile.thumbnail.bytes)).toBe(true);
    expect(fromFile.info).toEqual(fromBytes.info);
  });
  test("image types sharp cannot read here are unsupported, not failed", async () => {
    const err = await imageRenderer.render({ file: "", bytes: Buffer.from("x"), dir: "", contentType: "image/heic", limits, timeoutMs: 1000, tools: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(Unsupported);
    expect(err.message).toBe("No thumbnail is made for image/heic images");
  });
});

describe("video posters", () => {
  test("a video recorded turned a quarter gives an upright poster and display dimensions", async () => {
    const file = join(dir, "turned.mp4");
    writeFileSync(file, await rotatedMp4(90));
    const tools = { ffmpeg: findExecutable("ffmpeg", null)!, ffprobe: findExecutable("ffprobe", null)! };
    const out = await videoRenderer.render({ file, dir, contentType: "video/mp4", limits, timeoutMs: 30_000, tools });
    expect([out.thumbnail.width, out.thumbnail.height]).toEqual([240, 320]);
    expect(out.info).toMatchObject({ width: 240, height: 320, rotation: 90, duration: 1 });
  });
});

describe("runTool", () => {
  test("a tool past its time limit is killed and the job gets a clear reason", async () => {
    const started = performance.now();
    const err = await runTool(findExecutable("sleep", null)!, ["10"], { timeoutMs: 1000 }).catch((e) => e);
    expect(err).toBeInstanceOf(MediaError);
    expect(err.message).toBe("sleep did not finish within 1 s and was stopped");
    expect(performance.now() - started).toBeLessThan(3000);
  });
  test("a failing tool's last error line becomes the reason, without the temporary path", async () => {
    const err = await runTool(findExecutable("ffprobe", null)!, ["-v", "error", join(dir, "missing.mp4")], { timeoutMs: 10_000, redact: dir }).catch((e) => e);
    expect(err).toBeInstanceOf(MediaError);
    expect(err.message).toStartWith("ffprobe could not read the file: missing.mp4: No such file");
    expect(err.message).not.toContain(dir);
  });
  test("output beyond the bound stops the tool", async () => {
    const err = await runTool(findExecutable("yes", null)!, [], { timeoutMs: 10_000, maxStdoutBytes: 1000 }).catch((e) => e);
    expect(err.message).toBe("yes produced more than 1000 bytes of output and was stopped");
  });
  test("tools are looked up in WORKER_TOOLS_DIR when set, else on PATH", () => {
    expect(findExecutable("ffmpeg", null)).toMatch(/ffmpeg$/);
    expect(findExecutable("ffmpeg", dir)).toBeNull();
  });
});
