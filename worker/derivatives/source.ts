import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ObjectStorage } from "../../domain/ports/storage.ts";
import { MediaError } from "./errors.ts";

/** A private temporary directory for one job, removed afterwards whatever happened. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "media-derivative-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Streams an object from storage to a file: external tools need a seekable file, and a large
 * object is never held in memory whole. The bytes must be the version the job is for (same
 * ETag, so also the size the job checked against its limit).
 */
export async function downloadTo(storage: ObjectStorage, key: string, path: string, expect: Expected): Promise<number> {
  return Bun.write(path, new Response(await open(storage, key, expect)));
}

/** A small object's bytes, in memory: for renderers that take them so (no temporary file). */
export async function readSmall(storage: ObjectStorage, key: string, expect: Expected): Promise<Buffer> {
  return Buffer.from(await new Response(await open(storage, key, expect)).arrayBuffer());
}

interface Expected {
  etag: string | null;
  maxBytes: number;
}

async function open(storage: ObjectStorage, key: string, expect: Expected): Promise<ReadableStream<Uint8Array>> {
  const got = await storage.get(key);
  if (!got) throw new MediaError("The file is missing from storage");
  if ((expect.etag && got.info.etag && got.info.etag !== expect.etag) || got.info.size > expect.maxBytes) {
    await got.body.cancel().catch(() => {});
    throw new MediaError("The stored file changed after the upload was confirmed; confirm it again");
  }
  return got.body;
}
