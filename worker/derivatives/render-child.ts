/**
 * The child process of worker/derivatives/niced.ts: renders set renditions at a lower CPU
 * priority than the service. Input: the path of a job file (argv[2]); output: one JSON line per
 * item on stdout, `{"id":…,"ok":true}` with the rendition at `<dir>/out-<id>.webp`, or
 * `{"id":…,"error":"…"}` when that rendition cannot be made (deterministic: not retried).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lowerOwnAutogroup } from "./nice-command.ts";
import type { NicedJob } from "./niced.ts";
import { type ImageInput, renderCover } from "./render.ts";

lowerOwnAutogroup();
const job = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as NicedJob;
const input: ImageInput = job.raw ? { ...job.raw, data: readFileSync(job.input) } : job.input;
for (const item of job.items) {
  try {
    const bytes = await renderCover(input, { width: item.width, height: item.height }, { maxPixels: job.maxPixels, format: "webp" });
    writeFileSync(join(job.dir, `out-${item.id}.webp`), bytes);
    process.stdout.write(`${JSON.stringify({ id: item.id, ok: true })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ id: item.id, error: err instanceof Error ? err.message : String(err) })}\n`);
  }
}
