// Filesystem primitives for crash safety: bytes are written to a private temp
// file, fsynced, and only then renamed into place, so a reader (or a restart
// after a crash) sees either the previous file or the complete new one.

import { createHash, randomBytes } from "node:crypto";
import { type FileHandle, open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { md5OnThread } from "./md5-thread.ts";
import { DROP_FROM_CACHE_BYTES, dropFromPageCache } from "./page-cache.ts";

export const randomName = () => randomBytes(12).toString("hex");

export interface TempFile {
  path: string;
  size: number;
  /** Hex MD5 of the bytes (the S3 ETag of a single-part object). */
  md5: string;
}

async function writeAll(fh: FileHandle, chunk: Uint8Array): Promise<void> {
  let off = 0;
  while (off < chunk.length) {
    const { bytesWritten } = await fh.write(chunk, off, chunk.length - off);
    off += bytesWritten;
  }
}

/** Stream a body into a new temp file, hashing as it goes. Removes the file on failure. */
export async function writeTemp(tmpDir: string, source: AsyncIterable<Uint8Array>): Promise<TempFile> {
  const path = join(tmpDir, randomName());
  const fh = await open(path, "wx");
  const md5 = md5OnThread();
  let size = 0;
  let digest: string;
  try {
    for await (const chunk of source) {
      // The hashing thread and the disk work at once: each is a bottleneck alone.
      md5.update(chunk);
      await writeAll(fh, chunk);
      size += chunk.length;
    }
    await fh.sync();
    if (size >= DROP_FROM_CACHE_BYTES) dropFromPageCache(fh.fd);
    await fh.close();
    digest = await md5.digest();
  } catch (e) {
    md5.discard();
    await fh.close().catch(() => {});
    await unlink(path).catch(() => {});
    throw e;
  }
  return { path, size, md5: digest };
}

/** Read [start, end) of an open file in bounded chunks. */
export async function* readRange(fh: FileHandle, start: number, end: number, chunkSize = 1 << 20): AsyncGenerator<Uint8Array> {
  let pos = start;
  while (pos < end) {
    const buf = Buffer.allocUnsafe(Math.min(chunkSize, end - pos));
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) throw new Error("file shorter than recorded size");
    pos += bytesRead;
    yield buf.subarray(0, bytesRead);
  }
}

export async function writeFileAtomic(tmpDir: string, dest: string, content: string): Promise<void> {
  const tmp = join(tmpDir, randomName());
  const fh = await open(tmp, "wx");
  try {
    await fh.writeFile(content);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, dest);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw e;
  }
}

export async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await Bun.file(path).text()) as T;
  } catch {
    return undefined;
  }
}

export const isNotFound = (e: unknown) => (e as NodeJS.ErrnoException)?.code === "ENOENT";

export const sha256Name = (s: string) => createHash("sha256").update(s).digest("hex");
