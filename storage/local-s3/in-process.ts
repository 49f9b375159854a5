// The nodes this process runs, for clients in the same process. A client aimed at one of them
// (its URL, path-style, its region, a credential it accepts) reads and writes the node's store
// directly: no HTTP request, no SigV4 signing and verifying, no copy through a socket. That was
// most of the CPU the worker spent per thumbnail outside sharp (bench/notes/2026-11-29-thumbnails.md).
// The checks of the HTTP path that say something about the bytes stay: the credential and region,
// the bucket, the key's length, the size limit of a PUT; the same store code publishes (fsync,
// rename, sidecar) and serves (the version opened is the version answered).

import type { FileHandle } from "node:fs/promises";
import { MAX_PUT_SIZE } from "./context.ts";
import { Errors } from "./errors.ts";
import { readRange } from "./files.ts";
import { fieldsFromHeaders } from "./http.ts";
import { validateKey } from "./ops-object.ts";
import type { ObjectMeta, Store } from "./store.ts";

interface Node {
  store: Store;
  region: string;
  secrets: ReadonlyMap<string, string>;
}

const nodes = new Map<string, Node>();

/** Makes a running node reachable in-process at `url`; the returned function takes it back (on stop). */
export function registerInProcess(url: string, node: Node): () => void {
  const origin = new URL(url).origin;
  nodes.set(origin, node);
  return () => {
    if (nodes.get(origin) === node) nodes.delete(origin);
  };
}

export interface InProcessObject {
  meta: ObjectMeta;
  /** Made when first read: a small object's stream is a copy of `bytes`. */
  readonly body: ReadableStream<Uint8Array>;
  /** A small object's bytes, read whole (see WHOLE). */
  bytes?: Uint8Array;
}

/** GET and PUT of whole objects against a node of this process, as the HTTP path answers them. */
export interface InProcessObjects {
  /** Throws NoSuchBucket and NoSuchKey (S3Error) as the node answers them over HTTP. */
  get(bucket: string, key: string): Promise<InProcessObject>;
  put(bucket: string, key: string, body: Uint8Array | Blob, opts: { contentType: string; cacheControl?: string }): Promise<ObjectMeta>;
  /** The file of the key's current version (Store.objectFile); throws as `get` does. */
  file(bucket: string, key: string): { meta: ObjectMeta; path: string };
}

/**
 * The node of this process listening at `endpoint`, when the client would be let in over HTTP
 * (a credential it holds, the region it serves); null otherwise (another store, a node of another
 * process, a stopped node, a wrong credential), and the client goes over HTTP as before.
 */
export function inProcessNode(endpoint: string, credential: { accessKeyId: string; secretAccessKey: string }, region: string): InProcessObjects | null {
  if (nodes.size === 0) return null;
  const url = URL.parse(endpoint);
  if (!url || (url.pathname !== "/" && url.pathname !== "")) return null;
  const node = nodes.get(url.origin);
  if (!node || node.region !== region || node.secrets.get(credential.accessKeyId) !== credential.secretAccessKey) return null;
  return objectsOf(node.store);
}

function objectsOf(store: Store): InProcessObjects {
  return {
    async get(bucket, key) {
      if (!store.bucket(bucket)) throw Errors.noSuchBucket(bucket);
      const { meta, fh } = await store.openObject(bucket, key);
      if (meta.size > WHOLE) return { meta, body: fileStream(fh, meta.size) };
      const bytes = await readWhole(fh, meta.size);
      let body: ReadableStream<Uint8Array> | undefined;
      return {
        meta,
        bytes,
        // A Blob-backed stream: Bun.serve keeps the Content-Length a route sets on such a body
        // (thumbnails, renders), where it drops it on a JavaScript stream. Only made when read:
        // the worker takes `bytes` (each copy of a photo was about 3 ms on a 2-vCPU machine).
        get body() {
          return (body ??= new Blob([bytes]).stream());
        },
      };
    },
    file(bucket, key) {
      if (!store.bucket(bucket)) throw Errors.noSuchBucket(bucket);
      return store.objectFile(bucket, key);
    },
    async put(bucket, key, body, opts) {
      if (!store.bucket(bucket)) throw Errors.noSuchBucket(bucket);
      validateKey(key);
      const size = body instanceof Blob ? body.size : body.byteLength;
      if (size > MAX_PUT_SIZE) throw Errors.entityTooLarge(MAX_PUT_SIZE);
      const headers = new Headers({ "content-type": opts.contentType });
      if (opts.cacheControl) headers.set("cache-control", opts.cacheControl);
      const fields = { ...fieldsFromHeaders(headers), tags: [] };
      const tmp = await store.writeTemp(body instanceof Blob ? body.stream() : once(body));
      try {
        if (tmp.size !== size) throw Errors.incompleteBody();
        return await store.putObject(bucket, key, tmp, fields);
      } catch (e) {
        await store.discard(tmp);
        throw e;
      }
    },
  };
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/** Objects up to this size are read whole, at once; larger ones a MiB at a time as they are consumed. */
const WHOLE = 32 * 1024 * 1024;

/** A small object's bytes, read at once; the handle is closed after. */
async function readWhole(fh: FileHandle, size: number): Promise<Buffer<ArrayBuffer>> {
  try {
    const bytes = Buffer.allocUnsafe(size);
    for (let at = 0; at < size; ) {
      const { bytesRead } = await fh.read(bytes, at, size - at, at);
      if (bytesRead === 0) throw new Error("file shorter than recorded size");
      at += bytesRead;
    }
    return bytes;
  } finally {
    await fh.close().catch(() => {});
  }
}

/** A large object's bytes a MiB at a time as they are consumed; the handle is closed at the end, on an error or when the reader cancels. */
function fileStream(fh: FileHandle, size: number): ReadableStream<Uint8Array> {
  const chunks = readRange(fh, 0, size);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await fh.close().catch(() => {});
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await chunks.next();
          if (next.done) {
            await close();
            controller.close();
          } else controller.enqueue(next.value);
        } catch (e) {
          await close();
          controller.error(e);
        }
      },
      async cancel() {
        await chunks.return(undefined).catch(() => {});
        await close();
      },
    },
    { highWaterMark: 0 },
  );
}
