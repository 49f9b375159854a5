import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Api } from "../support/http.ts";
import { fadeInMp4, gpsJpeg, mp3, pdf } from "../support/media-files.ts";
import { upload } from "../support/upload.ts";

/**
 * The promise behind `npm install && npm start` on a machine with only Node: the server, started
 * as a user starts it but with nothing on its PATH except bun (so no ffmpeg, ffprobe, pdftoppm or
 * pdfinfo could be found even where they are installed), gives an MP4, an MP3, a PDF and a JPEG
 * their thumbnails and facts within seconds.
 */
const root = join(import.meta.dir, "../..");
const dir = mkdtempSync(join(tmpdir(), "media-node-only-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

test("npm start with only bun on PATH: video, audio, PDF and photo get thumbnails and facts", async () => {
  const bin = join(dir, "bin");
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, "bun"));
  const secret = "b".repeat(64);
  const port = await freePort();
  const proc = Bun.spawn([join(bin, "bun"), "app/main.ts"], {
    cwd: root,
    env: { PATH: bin, HOME: dir, DATA_DIR: join(dir, "data"), PORT: String(port), STORAGE_PORT: String(await freePort()), INITIAL_ADMIN_KEY: secret },
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const url = `http://127.0.0.1:${port}`;
    for (const started = Date.now(); Date.now() - started < 30_000; await Bun.sleep(100)) {
      if (await fetch(`${url}/healthz`).then((r) => r.ok).catch(() => false)) break;
    }
    const api = new Api(url, secret);
    const bucket = (await api.post("/api/buckets", { name: "node-only" })).body;
    const files = {
      "clip.mp4": [await fadeInMp4(1, 2), "video/mp4"],
      "song.mp3": [await mp3(3), "audio/mpeg"],
      "doc.pdf": [pdf(2, 612, 792, { title: "Node only" }), "application/pdf"],
      "photo.jpg": [await gpsJpeg(800, 600), "image/jpeg"],
    } as const;
    const uploadedAt = performance.now();
    for (const [key, [bytes, contentType]] of Object.entries(files)) await upload(api, bucket.id, key, bytes, { contentType });
    let views: { id: string; key: string; info: Record<string, any>; thumbnail: { state: string; width: number; height: number } }[] = [];
    for (const started = Date.now(); Date.now() - started < 30_000; await Bun.sleep(200)) {
      views = (await api.get(`/api/media?bucketId=${bucket.id}&sort=key&order=asc`)).body.data;
      if (views.length === 4 && views.every((v) => v.thumbnail?.state !== "pending")) break;
    }
    const seconds = (performance.now() - uploadedAt) / 1000;
    const byKey = Object.fromEntries(views.map((v) => [v.key, v]));
    expect(views.map((v) => [v.key, v.thumbnail.state])).toEqual([["clip.mp4", "ready"], ["doc.pdf", "ready"], ["photo.jpg", "ready"], ["song.mp3", "ready"]]);
    expect(seconds).toBeLessThan(30);
    expect(byKey["clip.mp4"]!.info).toMatchObject({ videoCodec: "h264", duration: 3, width: 320, height: 240 });
    expect(byKey["song.mp3"]!.info).toMatchObject({ audioCodec: "mp3", channels: 1, title: "Tone" });
    expect(byKey["doc.pdf"]!.info).toMatchObject({ pages: 2, title: "Node only" });
    expect(byKey["photo.jpg"]!.info).toMatchObject({ width: 800, height: 600, exif: { make: "GeoCam" } });
    for (const v of views) expect(v.info.sha256).toMatch(/^[0-9a-f]{64}$/);
    // and renders of each picture kind, which decode the video and the PDF again
    for (const key of ["clip.mp4", "doc.pdf", "photo.jpg"]) {
      const res = await fetch(`${url}/api/media/${byKey[key]!.id}/render?width=100&format=png`, { headers: { authorization: `Bearer ${secret}` } });
      expect({ key, status: res.status }).toEqual({ key, status: 200 });
      await res.arrayBuffer();
    }
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}, 90_000);
