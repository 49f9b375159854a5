/** Object storage as the domain needs it. Keys here are physical keys (see domain/storage-keys.ts). */

export interface PresignedRequest {
  url: string;
  /** Headers the client must send unchanged (they are part of the signature). */
  headers: Record<string, string>;
}

export interface StoredObjectInfo {
  size: number;
  contentType: string | null;
  etag: string | null;
  lastModified: Date | null;
}

/** An object as `get` answers it. */
export interface StoredObject {
  body: ReadableStream<Uint8Array>;
  info: StoredObjectInfo;
  /**
   * The whole body, when the store already holds it in memory (the embedded node of this
   * process, objects up to 32 MiB); `body` then streams the same bytes, made only if read. A
   * reader that wants the bytes whole takes them without the stream's copies.
   */
  bytes?: Uint8Array;
}

/**
 * A file on this machine holding exactly an object's version (`localFile`): its bytes never
 * change; once a newer version replaces it the file is removed, so opening it either reads these
 * bytes or fails with ENOENT.
 */
export interface LocalFile {
  info: StoredObjectInfo;
  path: string;
}

export interface UploadedPart {
  partNumber: number;
  etag: string;
  size: number;
}

export interface ListedObject {
  /** Physical key. */
  key: string;
  size: number;
  lastModified: Date | null;
}

/** A conditional write: If-None-Match: * or If-Match: <etag> on PUT (S3, Ceph RGW, the embedded node). */
export type WriteCondition = { ifNoneMatch: "*" } | { ifMatch: string };

export interface ObjectStorage {
  // `now` is the signing time: the domain passes its clock so expiry can be tested.
  /**
   * `maxLength` is the most bytes the PUT may carry, never an exact length (a shorter body is
   * always accepted): a store that can enforce it (the embedded node) has it signed into the
   * URL and refuses a longer body; any other store ignores it, and confirm measures the bytes.
   * `condition` is signed: `{ ifNoneMatch: "*" }` (only if nothing is at the key) or
   * `{ ifMatch: etag }` (only over exactly those bytes), so the URL dies once it has been used.
   */
  presignPut(
    key: string,
    opts: { contentType: string; tagging?: string; maxLength?: number; condition?: WriteCondition; expiresIn: number; now: Date },
  ): PresignedRequest;
  /** `maxLength` as for presignPut: signed and enforced where the store can, else ignored. */
  presignUploadPart(key: string, opts: { uploadId: string; partNumber: number; contentType?: string; maxLength?: number; expiresIn: number; now: Date }): PresignedRequest;
  presignGet(key: string, opts: { expiresIn: number; downloadName?: string; now: Date }): string;

  createMultipart(key: string, opts: { contentType: string; tagging?: string }): Promise<string>;
  listParts(key: string, uploadId: string): Promise<UploadedPart[]>;
  completeMultipart(key: string, uploadId: string, parts: { partNumber: number; etag: string }[]): Promise<{ etag: string | null }>;
  abortMultipart(key: string, uploadId: string): Promise<void>;

  /** null when there is no such object. */
  head(key: string): Promise<StoredObjectInfo | null>;
  /** See StoredObject: `bytes` when the store holds the body whole in memory. */
  get(key: string): Promise<StoredObject | null>;
  /**
   * When the store is a node of this process: the file of the key's current version, for a
   * reader that can open files (the worker's picture process reads it there instead of being sent
   * the bytes). null for any other store, and when there is no such object.
   */
  localFile?(key: string): Promise<LocalFile | null>;
  /** A Blob (a file on disk) is sent with its length, read as it goes. */
  put(key: string, body: Uint8Array | ReadableStream<Uint8Array> | Blob, opts: { contentType: string; cacheControl?: string }): Promise<{ etag: string | null }>;
  putTags(key: string, tagging: string): Promise<void>;
  /** Copies the bytes, content type and tags at `from` to `to` inside the bucket (server-side); returns the copy's ETag. */
  copy(from: string, to: string): Promise<{ etag: string | null }>;
  delete(key: string): Promise<void>;
  /** Deletes every object under a prefix; returns how many. */
  deletePrefix(prefix: string): Promise<number>;
  /** Objects under a prefix in key order (UTF-8 bytes, as S3 lists them), one page at a time. */
  list(prefix: string): AsyncIterable<ListedObject[]>;
  /** The key segments right under a prefix, up to and including the next "/", in key order. */
  listPrefixes(prefix: string): AsyncIterable<string[]>;
}
