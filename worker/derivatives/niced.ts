import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MediaError } from "./errors.ts";
import { nicedCommand, type Priority } from "./nice-command.ts";
import { type ImageInput, isRaw, type RawImage } from "./render.ts";

/** What the child reads (render-child.ts). */
export interface NicedJob {
  /** A file holding the source: the encoded image, or the decoded pixels when `raw` is set. */
  input: string;
  raw?: Omit<RawImage, "data">;
  items: { id: string; width: number; height: number }[];
  maxPixels: number;
  dir: string;
}

const CHILD = join(import.meta.dir, "render-child.ts");

/**
 * Set renditions rendered in a child process at niceness `nice` (2026 attack run: a tenant's renders
 * on both cores made another tenant's storage PUT take 272 s on the embedded defaults). The
 * scheduler then gives the server's event loop, the storage node and PostgreSQL the CPU first,
 * and the renders take what is left; libvips' threads, started in the child, inherit its
 * priority (a priority set on the server process would not reach the threads it already has).
 *
 * Answers, per item id, the rendition or the Error that made it impossible (deterministic: the
 * caller does not retry it). A child that dies without answering (killed, out of memory) is a
 * thrown Error, retried like any other failure.
 */
export async function renderCoversNiced(input: ImageInput, items: NicedJob["items"], opts: { maxPixels: number; dir: string; priority: Priority }): Promise<Map<string, Buffer | Error>> {
  let file: string;
  let raw: NicedJob["raw"];
  if (typeof input === "string") file = input;
  else if (isRaw(input)) {
    file = join(opts.dir, "source.raw");
    writeFileSync(file, input.data);
    const { data: _data, ...meta } = input;
    raw = meta;
  } else {
    file = join(opts.dir, "source.img");
    writeFileSync(file, input);
  }
  const jobFile = join(opts.dir, "niced-job.json");
  const job: NicedJob = { input: file, ...(raw ? { raw } : {}), items, maxPixels: opts.maxPixels, dir: opts.dir };
  writeFileSync(jobFile, JSON.stringify(job));
  const command = nicedCommand(opts.priority, [process.execPath, CHILD, jobFile]);
  const proc = Bun.spawn(command, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const results = new Map<string, Buffer | Error>();
  for (const line of out.split("\n")) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as { id: string; ok?: true; error?: string };
    results.set(r.id, r.ok ? readFileSync(join(opts.dir, `out-${r.id}.webp`)) : new MediaError(r.error ?? "The rendition could not be made"));
  }
  if (code !== 0 || results.size < items.length) {
    throw new Error(`the rendering process ended with status ${code} after ${results.size} of ${items.length} renditions: ${err.trim().split("\n").at(-1)?.slice(0, 300) ?? ""}`);
  }
  return results;
}
