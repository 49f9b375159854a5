import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketCorsCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import type { ListedObject, LocalFile, ObjectStorage, PresignedRequest, StoredObject, StoredObjectInfo, UploadedPart, WriteCondition } from "../domain/ports/storage.ts";
import { S3Error } from "./local-s3/errors.ts";
import type { ObjectMeta } from "./local-s3/store.ts";
import { type InProcessObjects, inProcessNode, MAX_LENGTH_PARAM } from "./local-s3/index.ts";
import { Presigner } from "./presigner.ts";
import { ATTEMPTS, timeoutError, withinDeadline } from "./s3-deadline.ts";

export interface S3StorageOptions {
  /** Where this server reaches storage. */
  endpoint: string | null;
  /** Where clients reach storage, when it differs (S3_PUBLIC_ENDPOINT). Presigned URLs use it. */
  publicEndpoint: string | null;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  /**
   * S3_TIMEOUT_MS: the longest an operation waits for its answer, its retries included
   * (storage/s3-deadline.ts), and for a transfer, the longest wait for the next byte. A store
   * that hangs then fails the request (503 to clients) instead of holding it.
   */
  timeoutMs?: number;
  /** Wraps every call to storage (metrics, traces); `operation` is one of a fixed set of names. */
  instrument?: StorageInstrument;
  /**
   * The store refuses a PUT body longer than a maximum signed into its URL (the embedded
   * node's `max-content-length`). S3 has no such bound for a presigned PUT (only a signed
   * Content-Length, which would make the declared size exact), so for any other store the
   * maximum is not signed and confirm measures the bytes.
   */
  enforcesMaxLength?: boolean;
  /**
   * Whole-object GET and PUT against an embedded node running in this same process go to its
   * store directly (default); false sends them over HTTP as to any other store (the benches
   * compare the two; tests check they answer alike).
   */
  inProcess?: boolean;
}

export type StorageInstrument = <T>(operation: string, run: () => Promise<T>) => Promise<T>;

/** The calls that reach storage, and the operation name each is reported under. */
const INSTRUMENTED = {
  createMultipart: "create_multipart",
  listParts: "list_parts",
  completeMultipart: "complete_multipart",
  abortMultipart: "abort_multipart",
  head: "head",
  get: "get",
  localFile: "file",
  put: "put",
  putTags: "put_tags",
  copy: "copy",
  delete: "delete",
  deletePrefix: "delete_prefix",
  listPage: "list",
  ping: "head_bucket",
} as const;

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Any S3-compatible store (AWS S3, R2, MinIO, Garage, Ceph, the embedded node). Operations go
 * through the AWS SDK; URLs are signed by our presigner (storage/presigner.ts), which is
 * byte-for-byte what the SDK would sign, only much faster.
 */
export class S3Storage implements ObjectStorage {
  readonly client: S3Client;
  private readonly presigner: Presigner;
  /** Signs this server's own GETs and PUTs, at the endpoint the server uses (never the public one). */
  private readonly internal: Presigner;
  private readonly timeoutMs: number;

  constructor(private readonly opts: S3StorageOptions) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const instrument = opts.instrument;
    if (instrument) {
      // Wrapped once here rather than in every method; calls between methods are not wrapped twice.
      const self = this as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      for (const [method, operation] of Object.entries(INSTRUMENTED)) {
        const original = self[method]!.bind(this);
        self[method] = (...args) => instrument(operation, () => original(...args));
      }
    }
    const endpoint = opts.endpoint ?? `https://s3.${opts.region}.amazonaws.com`;
    this.client = new S3Client({
      endpoint: opts.endpoint ?? undefined,
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
      // Checksums only where S3 requires them: not every S3-compatible store supports the newer ones.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      // Retries are made by withinDeadline, inside the operation's deadline; a stream is never sent twice.
      maxAttempts: 1,
      // Idle-based, so a large transfer that keeps moving is never cut.
      requestHandler: { connectionTimeout: this.timeoutMs, socketTimeout: this.timeoutMs },
    });
    const signer = { region: opts.region, bucket: opts.bucket, accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey, forcePathStyle: opts.forcePathStyle };
    this.internal = new Presigner({ endpoint, ...signer });
    this.presigner = new Presigner({
      endpoint: opts.publicEndpoint ?? endpoint,
      region: opts.region,
      bucket: opts.bucket,
      accessKeyId: opts.accessKeyId,
      secretAccessKey: opts.secretAccessKey,
      forcePathStyle: opts.forcePathStyle,
    });
  }

  /**
   * Creates the bucket when missing and lets browsers PUT with our headers and read ETag.
   * `cors: "if-missing"` (a store the operator runs): the rule is set only on a bucket that has
   * none, so rules of the operator's own are never replaced. Says whether it set the rule.
   */
  async ensureBucket(corsOrigins: string[] = ["*"], corsMode: "always" | "if-missing" = "always"): Promise<{ cors: "set" | "kept" }> {
    const Bucket = this.opts.bucket;
    try {
      await this.bounded((abortSignal) => this.client.send(new HeadBucketCommand({ Bucket }), { abortSignal }));
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      // The API and a worker starting together both find it missing: the second creation is
      // refused as already owned, which is what it wanted.
      await this.bounded((abortSignal) => this.client.send(new CreateBucketCommand({ Bucket }), { abortSignal })).catch((e: unknown) => {
        if ((e as { name?: string })?.name !== "BucketAlreadyOwnedByYou") throw e;
      });
    }
    if (corsMode === "if-missing") {
      const has = await this.bounded((abortSignal) => this.client.send(new GetBucketCorsCommand({ Bucket }), { abortSignal })).then(
        (out) => (out.CORSRules?.length ?? 0) > 0,
        (err: unknown) => {
          if (statusOf(err) === 404) return false; // NoSuchCORSConfiguration
          throw err;
        },
      );
      if (has) return { cors: "kept" };
    }
    const cors = {
      Bucket,
      CORSConfiguration: {
        CORSRules: [
          {
            AllowedOrigins: corsOrigins,
            AllowedMethods: ["GET", "PUT", "HEAD"],
            AllowedHeaders: ["*"],
            ExposeHeaders: ["ETag", "Content-Length", "Content-Type"],
            MaxAgeSeconds: 3600,
          },
        ],
      },
    };
    await this.bounded((abortSignal) => this.client.send(new PutBucketCorsCommand(cors), { abortSignal }));
    return { cors: "set" };
  }

  /** Whether a `maxLength` given to presignPut is signed and refused past by the store. */
  get enforcesMaxLength(): boolean {
    return this.opts.enforcesMaxLength === true;
  }

  presignPut(
    key: string,
    opts: { contentType: string; tagging?: string; maxLength?: number; condition?: WriteCondition; expiresIn: number; now: Date },
  ): PresignedRequest {
    const headers: Record<string, string> = { "Content-Type": opts.contentType };
    if (opts.condition && "ifNoneMatch" in opts.condition) headers["If-None-Match"] = "*";
    // Unquoted: Ceph RGW compares If-Match byte for byte with its bare ETag (a quoted one is a
    // 412 there); S3 and the embedded node take either form.
    else if (opts.condition) headers["If-Match"] = opts.condition.ifMatch.replace(/^"(.*)"$/, "$1");
    if (opts.tagging) headers["x-amz-tagging"] = opts.tagging;
    const bound = opts.maxLength !== undefined && this.enforcesMaxLength ? { query: { [MAX_LENGTH_PARAM]: String(opts.maxLength) } } : {};
    return { url: this.presigner.presign({ method: "PUT", key, expiresIn: opts.expiresIn, ...bound, headers, now: opts.now }), headers };
  }

  presignUploadPart(key: string, opts: { uploadId: string; partNumber: number; contentType?: string; maxLength?: number; expiresIn: number; now: Date }): PresignedRequest {
    const headers: Record<string, string> = opts.contentType ? { "Content-Type": opts.contentType } : {};
    const query: Record<string, string> = { partNumber: String(opts.partNumber), uploadId: opts.uploadId };
    if (opts.maxLength !== undefined && this.enforcesMaxLength) query[MAX_LENGTH_PARAM] = String(opts.maxLength);
    return { url: this.presigner.presign({ method: "PUT", key, expiresIn: opts.expiresIn, query, headers, now: opts.now }), headers };
  }

  presignGet(key: string, opts: { expiresIn: number; downloadName?: string; now: Date }): string {
    const query: Record<string, string> = {};
    if (opts.downloadName) query["response-content-disposition"] = contentDisposition(opts.downloadName);
    return this.presigner.presign({ method: "GET", key, expiresIn: opts.expiresIn, query, now: opts.now });
  }

  async createMultipart(key: string, opts: { contentType: string; tagging?: string }): Promise<string> {
    const out = await this.bounded(
      (abortSignal) => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.opts.bucket, Key: key, ContentType: opts.contentType, Tagging: opts.tagging }), { abortSignal }),
    );
    if (!out.UploadId) throw new Error("storage returned no UploadId");
    return out.UploadId;
  }

  async listParts(key: string, uploadId: string): Promise<UploadedPart[]> {
    const parts: UploadedPart[] = [];
    let marker: string | undefined;
    do {
      const out = await this.bounded(
        (abortSignal) => this.client.send(new ListPartsCommand({ Bucket: this.opts.bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker }), { abortSignal }),
      );
      for (const p of out.Parts ?? []) parts.push({ partNumber: p.PartNumber!, etag: p.ETag!, size: p.Size ?? 0 });
      marker = out.IsTruncated ? out.NextPartNumberMarker : undefined;
    } while (marker);
    return parts;
  }

  async completeMultipart(key: string, uploadId: string, parts: { partNumber: number; etag: string }[]): Promise<{ etag: string | null }> {
    const input = {
      Bucket: this.opts.bucket,
      Key: key,
      UploadId: uploadId,
      MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
    };
    // No deadline in all: S3 may work minutes on a large upload, sending spaces meanwhile.
    const out = await this.bounded((abortSignal) => this.client.send(new CompleteMultipartUploadCommand(input), { abortSignal }), { total: false });
    return { etag: out.ETag ?? null };
  }

  async abortMultipart(key: string, uploadId: string): Promise<void> {
    try {
      await this.bounded((abortSignal) => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.opts.bucket, Key: key, UploadId: uploadId }), { abortSignal }));
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
  }

  async head(key: string): Promise<StoredObjectInfo | null> {
    try {
      const out = await this.bounded((abortSignal) => this.client.send(new HeadObjectCommand({ Bucket: this.opts.bucket, Key: key }), { abortSignal }));
      return { size: out.ContentLength ?? 0, contentType: out.ContentType ?? null, etag: out.ETag ?? null, lastModified: out.LastModified ?? null };
    } catch (err) {
      if (statusOf(err) === 404) return null;
      throw err;
    }
  }

  // GET and PUT of whole objects are the worker's hot path (one of each per thumbnail). Against
  // the embedded node of this same process they go to its store directly (storage/local-s3/in-process.ts:
  // no HTTP, no SigV4 on either side). Otherwise they are signed by our presigner and sent with
  // fetch, which costs half the CPU of the SDK's middleware stack per request
  // (bench/notes/2026-11-22-thumbnails.md). Streams of unknown length still go through the SDK,
  // which knows how to upload them.

  /** The embedded node of this process this client is aimed at, if it is (looked up per call: a node may stop). */
  private inProcess(): InProcessObjects | null {
    if (this.opts.inProcess === false || !this.opts.endpoint || !this.opts.forcePathStyle) return null;
    return inProcessNode(this.opts.endpoint, this.opts, this.opts.region);
  }

  async get(key: string): Promise<StoredObject | null> {
    const local = this.inProcess();
    if (local) {
      // Any 404 (no such key, no such bucket) is null, as over HTTP.
      const got = await local.get(this.opts.bucket, key).catch((err: unknown) => (err instanceof S3Error && err.status === 404 ? null : asStorageError("GET", key)(err)));
      if (!got) return null;
      const { meta } = got;
      const info = infoOf(meta);
      // The body is only made if it is read (see InProcessObject).
      return got.bytes ? { info, bytes: got.bytes, get body() { return got.body; } } : { body: got.body, info };
    }
    const res = await this.signedFetch("GET", key);
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok || !res.body) throw await storageError(res, "GET", key);
    const modified = res.headers.get("last-modified");
    return {
      body: res.body,
      info: {
        size: Number(res.headers.get("content-length") ?? 0),
        contentType: res.headers.get("content-type"),
        etag: res.headers.get("etag"),
        lastModified: modified ? new Date(modified) : null,
      },
    };
  }

  async localFile(key: string): Promise<LocalFile | null> {
    const local = this.inProcess();
    if (!local) return null;
    try {
      const { meta, path } = local.file(this.opts.bucket, key);
      return { info: infoOf(meta), path };
    } catch (err) {
      if (err instanceof S3Error && err.status === 404) return null;
      throw asStorageError("GET", key)(err);
    }
  }

  async put(key: string, body: Uint8Array | ReadableStream<Uint8Array> | Blob, opts: { contentType: string; cacheControl?: string }): Promise<{ etag: string | null }> {
    if (body instanceof ReadableStream) {
      const out = await this.client.send(
        new PutObjectCommand({ Bucket: this.opts.bucket, Key: key, Body: body, ContentType: opts.contentType, CacheControl: opts.cacheControl }),
      );
      return { etag: out.ETag ?? null };
    }
    const local = this.inProcess();
    if (local) {
      const meta = await local.put(this.opts.bucket, key, body, opts).catch(asStorageError("PUT", key));
      return { etag: `"${meta.etag}"` };
    }
    const headers: Record<string, string> = { "Content-Type": opts.contentType };
    if (opts.cacheControl) headers["Cache-Control"] = opts.cacheControl;
    const res = await this.signedFetch("PUT", key, headers, body);
    if (!res.ok) throw await storageError(res, "PUT", key);
    await res.body?.cancel();
    return { etag: res.headers.get("etag") };
  }

  /**
   * One request signed for a minute; network errors and 5xx are retried twice, within one
   * deadline for all the attempts (a hung store costs the deadline once, not per attempt).
   */
  private async signedFetch(method: "GET" | "PUT", key: string, headers: Record<string, string> = {}, body?: Uint8Array | Blob): Promise<Response> {
    const deadline = this.headersDeadline(body);
    try {
      for (let attempt = 1; ; attempt++) {
        const url = this.internal.presign({ method, key, expiresIn: 60, headers });
        const backoff = 100 * 2 ** attempt;
        const last = attempt === ATTEMPTS || performance.now() + backoff >= deadline.at;
        try {
          const res = await fetch(url, { method, headers, body: body as BodyInit | undefined, signal: deadline.signal });
          if (res.status < 500 || last) return res;
          await res.body?.cancel();
        } catch (err) {
          if (last || deadline.signal.aborted) throw err;
        }
        await Bun.sleep(backoff);
      }
    } finally {
      deadline.clear();
    }
  }

  /**
   * A deadline for the answer's headers only: a GET's body may stream for as long as it takes.
   * A PUT's headers come after its body, so its deadline allows for sending that at 1 MiB/s.
   */
  private headersDeadline(body?: Uint8Array | Blob): { signal: AbortSignal; at: number; clear: () => void } {
    const controller = new AbortController();
    const ms = this.timeoutMs + Math.ceil((body instanceof Blob ? body.size : (body?.byteLength ?? 0)) / 1024);
    const timer = setTimeout(() => controller.abort(timeoutError(ms)), ms);
    return { signal: controller.signal, at: performance.now() + ms, clear: () => clearTimeout(timer) };
  }

  /** The SDK call `send` within S3_TIMEOUT_MS, retries included (storage/s3-deadline.ts). */
  private bounded<T>(send: (abortSignal: AbortSignal) => Promise<T>, opts: { total?: boolean } = {}): Promise<T> {
    return withinDeadline(this.timeoutMs, send, opts);
  }

  /** Readiness: the bucket answers within `timeoutMs` (a hung store fails the check, not the probe). */
  async ping(timeoutMs: number): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.opts.bucket }), { abortSignal: AbortSignal.timeout(timeoutMs) });
  }

  /** One page of the listing under `prefix`, in key order (UTF-8 bytes), after `startAfter`. */
  async listPage(prefix: string, startAfter?: string, delimiter?: string): Promise<ListedPage> {
    const out = await this.bounded(
      (abortSignal) => this.client.send(new ListObjectsV2Command({ Bucket: this.opts.bucket, Prefix: prefix, StartAfter: startAfter, Delimiter: delimiter, MaxKeys: 1000 }), { abortSignal }),
    );
    const objects = (out.Contents ?? []).map((o) => ({ key: o.Key!, size: o.Size ?? 0, lastModified: o.LastModified ?? null }));
    const prefixes = (out.CommonPrefixes ?? []).map((p) => p.Prefix!);
    const last = [objects.at(-1)?.key, prefixes.at(-1)].filter((k): k is string => k !== undefined).sort(compareKeys).at(-1);
    return { objects, prefixes, next: out.IsTruncated && last ? last : null };
  }

  /** Every object under `prefix`, in key order, a page at a time: memory stays bounded whatever the count. */
  async *list(prefix: string): AsyncIterable<ListedObject[]> {
    let after: string | undefined;
    do {
      const page = await this.listPage(prefix, after);
      if (page.objects.length > 0) yield page.objects;
      after = page.next ?? undefined;
    } while (after);
  }

  /** The "directories" right under `prefix` (keys cut at the next "/"), in order. */
  async *listPrefixes(prefix: string): AsyncIterable<string[]> {
    let after: string | undefined;
    do {
      const page = await this.listPage(prefix, after, "/");
      if (page.prefixes.length > 0) yield page.prefixes;
      after = page.next ?? undefined;
    } while (after);
  }

  async putTags(key: string, tagging: string): Promise<void> {
    const TagSet = [...new URLSearchParams(tagging)].map(([Key, Value]) => ({ Key, Value }));
    await this.bounded((abortSignal) => this.client.send(new PutObjectTaggingCommand({ Bucket: this.opts.bucket, Key: key, Tagging: { TagSet } }), { abortSignal }));
  }

  async copy(from: string, to: string): Promise<{ etag: string | null }> {
    // Encoded per segment: the copy source is a URL path, and keys may hold any character.
    const source = `${this.opts.bucket}/${from.split("/").map(encodeURIComponent).join("/")}`;
    // No deadline in all, as for completeMultipart: a large copy may take S3 a while.
    const out = await this.bounded(
      (abortSignal) => this.client.send(new CopyObjectCommand({ Bucket: this.opts.bucket, Key: to, CopySource: source }), { abortSignal }),
      { total: false },
    );
    return { etag: out.CopyObjectResult?.ETag ?? null };
  }

  async delete(key: string): Promise<void> {
    await this.bounded((abortSignal) => this.client.send(new DeleteObjectCommand({ Bucket: this.opts.bucket, Key: key }), { abortSignal }));
  }

  async deletePrefix(prefix: string): Promise<number> {
    let deleted = 0;
    let token: string | undefined;
    do {
      const page = await this.bounded((abortSignal) => this.client.send(new ListObjectsV2Command({ Bucket: this.opts.bucket, Prefix: prefix, ContinuationToken: token }), { abortSignal }));
      const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
      if (keys.length > 0) {
        await this.bounded((abortSignal) => this.client.send(new DeleteObjectsCommand({ Bucket: this.opts.bucket, Delete: { Objects: keys, Quiet: true } }), { abortSignal }));
        deleted += keys.length;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return deleted;
  }
}

interface ListedPage {
  objects: ListedObject[];
  prefixes: string[];
  /** Where the next page starts (StartAfter), or null at the end. */
  next: string | null;
}

/** S3 orders keys by their UTF-8 bytes; JavaScript strings compare by UTF-16 units, which differs past U+FFFF. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** A non-2xx answer as an error shaped like the SDK's (name = S3 error code, $metadata.httpStatusCode). */
async function storageError(res: Response, method: string, key: string): Promise<Error> {
  const text = await res.text().catch(() => "");
  const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? `Http${res.status}`;
  const err = new Error(`storage ${method} ${key}: ${res.status} ${code}`);
  err.name = code;
  Object.assign(err, { $metadata: { httpStatusCode: res.status } });
  return err;
}

/** The in-process node's refusals, shaped as storageError makes the same answers over HTTP. */
/** An embedded node's object as the HTTP answer describes it: a quoted ETag, the modification time to the second. */
function infoOf(meta: Pick<ObjectMeta, "size" | "contentType" | "etag" | "lastModified">): StoredObjectInfo {
  return { size: meta.size, contentType: meta.contentType, etag: `"${meta.etag}"`, lastModified: new Date(meta.lastModified) };
}

function asStorageError(method: string, key: string): (err: unknown) => never {
  return (err) => {
    if (!(err instanceof S3Error)) throw err;
    const out = new Error(`storage ${method} ${key}: ${err.status} ${err.code}`);
    out.name = err.code;
    Object.assign(out, { $metadata: { httpStatusCode: err.status } });
    throw out;
  };
}

function statusOf(err: unknown): number | undefined {
  if (err instanceof S3ServiceException) return err.$metadata.httpStatusCode;
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

/** RFC 6266 with an RFC 5987 UTF-8 form, so any file name survives. */
function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
