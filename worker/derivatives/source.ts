import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ObjectStorage, StoredObject } from "../../domain/ports/storage.ts";
import { MediaError } from "./errors.ts";
import type { RenderContext, Rendered, Renderer } from "./kinds.ts";

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
 * Streams an object from storage to a file: the FFmpeg demuxer wants a seekable file, and a
 * large object is never held in memory whole. The bytes must be the version the job is for
 * (same ETag, so also the size the job checked against its limit). Answers the SHA-256 of the
 * bytes, hashed on the way.
 */
export async function downloadTo(storage: ObjectStorage, key: string, path: string, expect: Expected): Promise<{ sha256: string }> {
  const hasher = new Bun.CryptoHasher("sha256");
  await Bun.write(path, new Response(hashing((await open(storage, key, expect)).body, hasher)));
  return { sha256: hasher.digest("hex") };
}

/** A small object's bytes, in memory (no temporary file), and their SHA-256. */
export async function readSmall(storage: ObjectStorage, key: string, expect: Expected): Promise<{ bytes: Buffer; sha256: string }> {
  const got = await open(storage, key, expect);
  // The store's own bytes when it holds them whole (the embedded node): no stream, no copies.
  const whole = got.bytes;
  const bytes = whole ? Buffer.from(whole.buffer, whole.byteOffset, whole.byteLength) : Buffer.from(await new Response(got.body).arrayBuffer());
  return { bytes, sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex") };
}

/**
 * A store's file of one version (ObjectStorage.localFile), read whole, and its SHA-256: where the
 * picture process can open the file, it reads it itself rather than be sent the bytes. The file
 * never changes; gone means the version was replaced, as a changed ETag does.
 */
export async function readStoredFile(path: string, size: number): Promise<{ bytes: Buffer; sha256: string }> {
  const bytes = await readFile(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") throw new MediaError(CHANGED);
    throw err;
  });
  if (bytes.length !== size) throw new MediaError(CHANGED);
  return { bytes, sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex") };
}

/** Renders `ctx` by `renderer`, reading a `stored` source first (and answering its SHA-256). */
export async function renderSource(renderer: Renderer, ctx: RenderContext): Promise<Rendered> {
  if (!ctx.stored) return renderer.render(ctx);
  const { stored, ...rest } = ctx;
  const { bytes, sha256 } = await readStoredFile(stored.path, stored.size);
  return { ...(await renderer.render({ ...rest, bytes })), sha256 };
}

const CHANGED = "The stored file changed after the upload was confirmed; confirm it again";

function hashing(body: ReadableStream<Uint8Array>, hasher: Bun.CryptoHasher): ReadableStream<Uint8Array> {
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        hasher.update(chunk);
        out.enqueue(chunk);
      },
    }),
  );
}

interface Expected {
  etag: string | null;
  maxBytes: number;
}

async function open(storage: ObjectStorage, key: string, expect: Expected): Promise<StoredObject> {
  const got = await storage.get(key);
  if (!got) throw new MediaError("The file is missing from storage");
  if ((expect.etag && got.info.etag && got.info.etag !== expect.etag) || got.info.size > expect.maxBytes) {
    if (!got.bytes) await got.body.cancel().catch(() => {});
    throw new MediaError(CHANGED);
  }
  return got;
}
