import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../support/eventually.ts";
import { Api } from "../support/http.ts";
import { fadeInMp4, gpsJpeg, mp3, pdf } from "../support/media-files.ts";
import { freePort, START_CEILING_MS, spawnScript, untilServing } from "../support/processes.ts";
import { upload } from "../support/upload.ts";

/** Four files decoded at low priority: seconds on an idle machine, far longer under load. */
const DERIVATIVES_CEILING_MS = 180_000;

/**
 * The promise behind `npm install && npm start` on a machine with only Node: the server, started
 * as a user starts it but with nothing on its PATH except bun (so no ffmpeg, ffprobe, pdftoppm or
 * pdfinfo could be found even where they are installed), gives an MP4, an MP3, a PDF and a JPEG
 * their thumbnails and facts. The waits are ceilings for a loaded machine, not timings: picture
 * work runs at low priority (WORKER_NICE, WORKER_SCHED_IDLE) and waits for a busy CPU.
 */
const dir = mkdtempSync(join(tmpdir(), "media-node-only-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


test("npm start with only bun on PATH: video, audio, PDF and photo get thumbnails and facts", async () => {
  const bin = join(dir, "bin");
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, "bun"));
  const secret = "b".repeat(64);
  const port = await freePort();
  // Bun itself is the symlink's target; the PATH is what matters.
  const child = spawnScript("app/main.ts", { PATH: bin, HOME: dir, DATA_DIR: join(dir, "data"), PORT: String(port), STORAGE_PORT: String(await freePort()), INITIAL_ADMIN_KEY: secret });
  try {
    const url = `http://127.0.0.1:${port}`;
    await untilServing(child, `${url}/healthz`, { what: "npm start (only bun on PATH) to answer /healthz" });
    const api = new Api(url, secret);
    const bucket = (await api.post("/api/buckets", { name: "node-only" })).body;
    const files = {
      "clip.mp4": [await fadeInMp4(1, 2), "video/mp4"],
      "song.mp3": [await mp3(3), "audio/mpeg"],
      "doc.pdf": [pdf(2, 612, 792, { title: "Node only" }), "application/pdf"],
      "photo.jpg": [await gpsJpeg(800, 600), "image/jpeg"],
    } as const;
    for (const [key, [bytes, contentType]] of Object.entries(files)) await upload(api, bucket.id, key, bytes, { contentType });
    type View = { id: string; key: string; info: Record<string, any>; thumbnail: { state: string; width: number; height: number } };
    const views = await eventually(
      async () => {
        const data: View[] = (await api.get(`/api/media?bucketId=${bucket.id}&sort=key&order=asc`)).body.data;
        return data.length === 4 && data.every((v) => v.thumbnail?.state !== "pending") ? data : undefined;
      },
      { what: "the four thumbnails to settle", timeoutMs: DERIVATIVES_CEILING_MS, intervalMs: 250 },
    );
    const byKey = Object.fromEntries(views.map((v) => [v.key, v]));
    expect(views.map((v) => [v.key, v.thumbnail.state])).toEqual([["clip.mp4", "ready"], ["doc.pdf", "ready"], ["photo.jpg", "ready"], ["song.mp3", "ready"]]);
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
    child.proc.kill("SIGTERM");
    await child.finished();
  }
}, START_CEILING_MS + DERIVATIVES_CEILING_MS + 120_000);
