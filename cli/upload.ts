import { readdirSync, statSync } from "node:fs";
import { basename, join, relative, resolve, sep } from "node:path";
import type { AnyTool } from "../tools/define.ts";
import { findTool } from "../tools/registry.ts";
import { resolveBucketId } from "./buckets.ts";
import { ApiError, type RestClient } from "./client.ts";
import { type Command, type Context, EXIT, exitCodeOf, Interrupted } from "./context.ts";
import { type FlagSpec, UsageError } from "./flags.ts";
import { humanBytes, renderJson } from "./output.ts";
import { type ProgressSink, progressBar, silentProgress } from "./progress.ts";
import { ResumeStore, type UploadState } from "./resume.ts";
import { detectFileContentType } from "./sniff.ts";
import { fileBody, Limiter, putBytes, StorageError, withRetries } from "./transfer.ts";

const MiB = 1024 * 1024;
/** S3 rules: parts of 5 MiB to 5 GiB (the last may be smaller), at most 10,000 of them. */
const MIN_PART = 5 * MiB;
const MAX_PART = 5 * 1024 * MiB;
const MAX_PARTS = 10_000;

export const UPLOAD_DEFAULTS = { threshold: 16 * MiB, partSize: 16 * MiB, concurrency: 4, retries: 5 };


function tool(name: string): AnyTool {
  const t = findTool(name);
  if (!t) throw new Error(`the registry has no ${name} tool`);
  return t;
}

export interface LocalFile {
  path: string;
  key: string;
  size: number;
  mtimeMs: number;
}

export interface UploadOptions {
  bucketId: string;
  contentType: string | null;
  tags: string[] | null;
  threshold: number;
  partSize: number;
  concurrency: number;
  retries: number;
  resume: boolean;
  /** Count bytes during each request (for a bar) instead of per finished request. */
  byteProgress: boolean;
  /** Replace an object already at the key; without it such a file is refused (the API's overwrite: false). */
  force: boolean;
}

export interface UploadResult {
  file: string;
  key: string;
  id: string;
  bucketId: string;
  size: number;
  contentType: string;
  kind: string;
  multipart: boolean;
  parts?: number;
  partsUploaded?: number;
  partsReused?: number;
  seconds: number;
}

export interface UploadFailure {
  file: string;
  key: string;
  error: { code: string; message: string };
}

// ---------------------------------------------------------------------------------------
// Files and keys

function joinKey(prefix: string, rel: string): string {
  if (!prefix) return rel;
  return prefix.endsWith("/") ? `${prefix}${rel}` : `${prefix}/${rel}`;
}

/** Regular files under a directory, sorted, with keys relative to it. Symlinked directories are not followed. */
function walk(dir: string, prefix: string, out: LocalFile[]) {
  const visit = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.isFile() || entry.isSymbolicLink()) {
        const st = statSync(path, { throwIfNoEntry: false });
        if (!st?.isFile()) continue;
        const rel = relative(dir, path).split(sep).join("/");
        out.push({ path, key: joinKey(prefix, rel), size: st.size, mtimeMs: st.mtimeMs });
      }
    }
  };
  visit(dir);
}

export function collectFiles(args: string[], opts: { key?: string; prefix?: string }): LocalFile[] {
  const prefix = opts.prefix ?? "";
  const files: LocalFile[] = [];
  for (const arg of args) {
    const path = resolve(arg);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) throw new UsageError(`no such file or directory: ${arg}`, "upload");
    if (st.isDirectory()) walk(path, prefix, files);
    else if (st.isFile()) files.push({ path, key: joinKey(prefix, basename(path)), size: st.size, mtimeMs: st.mtimeMs });
    else throw new UsageError(`not a file or directory: ${arg}`, "upload");
  }
  if (opts.key !== undefined) {
    if (files.length !== 1 || args.length !== 1) throw new UsageError("--key names one object: give exactly one file (use --prefix for several)", "upload");
    files[0]!.key = opts.key;
  }
  if (files.length === 0) throw new UsageError("nothing to upload: the directories are empty", "upload");
  return files;
}

/** Part size for a file: at least the requested one, larger when 10,000 parts would not hold the file. */
export function partSizeFor(size: number, requested: number): number {
  const needed = Math.ceil(size / MAX_PARTS / MiB) * MiB;
  return Math.min(MAX_PART, Math.max(requested, needed));
}


// ---------------------------------------------------------------------------------------
// The transfer

/** Test hooks (docs/cli.md): stop after N uploaded parts; fail the first attempt of some parts. */
function testHooks(env: Context["env"]) {
  const stopAfter = Number(env.MEDIA_CLI_TEST_STOP_AFTER_PARTS ?? 0);
  const failOnce = new Set((env.MEDIA_CLI_TEST_FAIL_PARTS ?? "").split(",").filter(Boolean).map(Number));
  return { stopAfter: stopAfter > 0 ? stopAfter : null, failOnce };
}

export class Uploader {
  private readonly limiter: Limiter;
  private readonly hooks: ReturnType<typeof testHooks>;
  private partsThisRun = 0;

  constructor(
    ctx: Context,
    private readonly client: RestClient,
    private readonly store: ResumeStore,
    private readonly opts: UploadOptions,
    private readonly progress: ProgressSink,
  ) {
    this.limiter = new Limiter(opts.concurrency);
    this.hooks = testHooks(ctx.env);
  }

  private retryNote = (what: string) => (err: unknown, attempt: number, waitMs: number) =>
    this.progress.note(`${what} failed (${(err as Error).message}); attempt ${attempt + 1} of ${this.opts.retries} in ${(waitMs / 1000).toFixed(1)}s`);

  /** PUTs bytes with a URL signed afresh for each attempt; takes back counted bytes on failure. */
  private async put(sign: () => Promise<{ url: string; headers: Record<string, string> }>, file: LocalFile, start: number, end: number, what: string, inject = false): Promise<string | null> {
    const bunFile = Bun.file(file.path);
    return withRetries(
      this.opts.retries,
      async (attempt) => {
        const signed = await sign();
        if (inject && attempt === 1) throw new StorageError(0, "injected", "injected failure (MEDIA_CLI_TEST_FAIL_PARTS)");
        let counted = 0;
        const onBytes = this.opts.byteProgress
          ? (n: number) => {
              counted += n;
              this.progress.add(n);
            }
          : undefined;
        try {
          const etag = await putBytes(signed.url, signed.headers, fileBody(bunFile, start, end, onBytes), end - start);
          if (!onBytes) this.progress.add(end - start);
          return etag;
        } catch (err) {
          this.progress.add(-counted);
          throw err;
        }
      },
      this.retryNote(what),
    );
  }

  async upload(file: LocalFile): Promise<UploadResult> {
    const started = performance.now();
    this.progress.label(file.key);
    const contentType = this.opts.contentType ?? (await detectFileContentType(file.path, file.key));
    const result = file.size >= this.opts.threshold ? await this.multipart(file, contentType) : await this.single(file, contentType);
    if (result.object.size !== file.size) {
      throw new ApiError(0, "size_mismatch", `storage holds ${result.object.size} bytes for ${file.key}, the file has ${file.size}`);
    }
    this.progress.fileDone();
    const o = result.object;
    return {
      file: file.path,
      key: o.key,
      id: o.id,
      bucketId: o.bucketId,
      size: o.size,
      contentType: o.contentType,
      kind: o.kind,
      multipart: result.parts !== undefined,
      ...(result.parts !== undefined ? { parts: result.parts, partsUploaded: result.uploaded, partsReused: result.reused } : {}),
      seconds: Math.round(performance.now() - started) / 1000,
    };
  }

  private target(file: LocalFile) {
    return { bucketId: this.opts.bucketId, key: file.key };
  }

  private optional(contentType: string | null) {
    return { ...(contentType ? { contentType } : {}), ...(this.opts.tags ? { tags: this.opts.tags } : {}) };
  }

  /**
   * Without --force the server refuses a key a live object holds (overwrite: false), when the
   * upload starts and again as a multipart upload completes; the signed write condition of a
   * single PUT makes it fail if another writer stores bytes at the key in between.
   */
  private guard() {
    return this.opts.force ? {} : { overwrite: false };
  }

  /** The API's refusal of a taken key, said in the CLI's terms; other errors pass through. */
  private async guarded<T>(file: LocalFile, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (!isTakenKey(err)) throw err;
      throw new ApiError(409, "conflict", `${file.key} already exists in the bucket (object ${err.details.objectId}): use --force to replace it`, err.details);
    }
  }

  private async single(file: LocalFile, contentType: string | null) {
    await this.limiter.run(() =>
      this.put(
        () => this.guarded(file, () => this.client.call(tool("presign_upload"), { ...this.target(file), ...this.optional(contentType), size: file.size, ...this.guard() })),
        file,
        0,
        file.size,
        file.key,
      ),
    );
    const object = await this.client.call<MediaObject>(tool("presign_confirm"), this.target(file));
    return { object, parts: undefined as number | undefined, uploaded: 0, reused: 0 };
  }

  /**
   * The multipart flow, with resume: create (or reuse the saved uploadId), upload the
   * parts storage does not have yet, complete with the recorded list of parts (which
   * verifies every saved ETag), confirm. A saved upload the server no longer knows, or whose
   * parts storage refuses, is started over once.
   */
  private async multipart(file: LocalFile, contentType: string | null) {
    const id = { url: this.client.url, bucketId: this.opts.bucketId, key: file.key, size: file.size, mtimeMs: file.mtimeMs };
    let state = this.opts.resume ? this.store.load(id) : null;
    if (!this.opts.resume) this.store.remove(id);
    for (let round = 0; ; round++) {
      const resumed = state !== null;
      if (!state) {
        const created = await this.guarded(file, () =>
          this.client.call<{ uploadId: string }>(tool("presign_create_multipart"), { ...this.target(file), ...this.optional(contentType), size: file.size, ...this.guard() }),
        );
        state = {
          version: 1,
          ...id,
          path: file.path,
          partSize: partSizeFor(file.size, this.opts.partSize),
          uploadId: created.uploadId,
          contentType,
          tags: this.opts.tags,
          parts: {},
          createdAt: new Date().toISOString(),
        };
        this.store.save(state);
      }
      const total = Math.max(1, Math.ceil(file.size / state.partSize));
      const reused = Object.keys(state.parts).length;
      const reusedBytes = Object.keys(state.parts).reduce((n, p) => n + partRange(Number(p), state!.partSize, file.size)[1] - partRange(Number(p), state!.partSize, file.size)[0], 0);
      if (resumed) {
        this.progress.note(`resuming ${file.key}: ${state.completed ? "all parts uploaded, confirming" : `${reused} of ${total} parts already uploaded`}`);
        this.progress.skip(reusedBytes);
      }
      try {
        let uploaded = 0;
        if (!state.completed) {
          uploaded = await this.parts(file, state, total);
          this.progress.label(`${file.key} (completing)`);
          const parts = Object.entries(state.parts)
            .map(([n, etag]) => ({ partNumber: Number(n), etag }))
            .sort((a, b) => a.partNumber - b.partNumber);
          await this.guarded(file, () => this.client.call(tool("presign_complete_upload"), { ...this.target(file), uploadId: state!.uploadId, parts, ...this.guard() }));
          state.completed = true;
          this.store.save(state);
        }
        const object = await this.client.call<MediaObject>(tool("presign_confirm"), this.target(file));
        this.store.remove(id);
        return { object, parts: total, uploaded, reused };
      } catch (err) {
        // Gone (404), closed by an abort, a confirm or the sweeper (409 conflict), or its parts
        // no longer match (400): the saved state cannot be continued.
        // A taken key is not: the parts stay, for the same command with --force.
        const stale = err instanceof ApiError && !isTakenKey(err) && (err.status === 404 || err.code === "conflict" || err.code === "bad_request");
        if (!(resumed && round === 0 && stale)) throw err;
        this.progress.note(`the saved upload of ${file.key} cannot be continued (${err.message}); starting over`);
        this.progress.skip(-reusedBytes);
        const old = state;
        await this.client.call(tool("presign_abort_multipart"), { ...this.target(file), uploadId: old.uploadId }).catch(() => {});
        this.store.remove(id);
        state = null;
      }
    }
  }

  /** Uploads the missing parts through the shared limiter; stops scheduling after the first failure. */
  private async parts(file: LocalFile, state: UploadState, total: number): Promise<number> {
    let failed = false;
    let uploaded = 0;
    const todo = Array.from({ length: total }, (_, i) => i + 1).filter((n) => !state.parts[n]);
    const results = await Promise.allSettled(
      todo.map((n) =>
        this.limiter.run(async () => {
          if (failed) return;
          const [start, end] = partRange(n, state.partSize, file.size);
          const sign = () => this.client.call(tool("presign_upload_part"), { ...this.target(file), uploadId: state.uploadId, partNumber: n });
          const etag = await this.put(sign, file, start, end, `part ${n} of ${file.key}`, this.hooks.failOnce.has(n)).catch((err) => {
            failed = true;
            throw err;
          });
          if (!etag) {
            failed = true;
            throw new StorageError(0, "missing_etag", `storage sent no ETag for part ${n}`);
          }
          state.parts[n] = etag;
          this.store.save(state);
          uploaded++;
          this.partsThisRun++;
          if (this.hooks.stopAfter !== null && this.partsThisRun >= this.hooks.stopAfter) {
            failed = true;
            throw new Interrupted(`stopped after ${this.partsThisRun} parts (MEDIA_CLI_TEST_STOP_AFTER_PARTS)`);
          }
        }),
      ),
    );
    const firstError = results.find((r) => r.status === "rejected") as PromiseRejectedResult | undefined;
    if (firstError) throw firstError.reason;
    return uploaded;
  }
}

interface MediaObject {
  id: string;
  key: string;
  bucketId: string;
  size: number;
  contentType: string;
  kind: string;
}

/** A 409 naming the object that holds the key (a closed multipart upload's 409 names the upload instead). */
function isTakenKey(err: unknown): err is ApiError & { details: { objectId: string } } {
  return err instanceof ApiError && err.code === "conflict" && typeof (err.details as { objectId?: unknown } | undefined)?.objectId === "string";
}

function partRange(n: number, partSize: number, size: number): [number, number] {
  const start = (n - 1) * partSize;
  return [start, Math.min(size, start + partSize)];
}

// ---------------------------------------------------------------------------------------
// The command

const flags: FlagSpec[] = [
  { name: "bucket", type: "string", required: true, placeholder: "id|name", description: "Target bucket, by id or name" },
  { name: "key", type: "string", description: "Object key for a single file (default: the file name, under --prefix)" },
  { name: "prefix", type: "string", description: "Key prefix: files go to <prefix>/<name>, directories to <prefix>/<path inside the directory>" },
  { name: "tags", type: "string", list: true, description: "Up to 10 labels applied to every uploaded object" },
  { name: "contentType", type: "string", description: "MIME type for every file (default: detected from the bytes, then the extension)" },
  { name: "threshold", type: "size", default: "16MiB", description: "Files this large or larger go multipart" },
  { name: "partSize", type: "size", default: "16MiB", description: "Multipart part size, at least 5MiB (raised when a file would need more than 10,000 parts)" },
  { name: "concurrency", type: "integer", default: UPLOAD_DEFAULTS.concurrency, description: "Parts or files transferred at once" },
  { name: "retries", type: "integer", default: UPLOAD_DEFAULTS.retries, description: "Attempts per part or file before giving up (with backoff)" },
  { name: "resume", type: "boolean", default: true, description: "Continue an interrupted multipart upload of the same file (--no-resume starts over)" },
  { name: "progress", type: "boolean", description: "Show a progress bar (default: when stderr is a terminal)" },
  { name: "force", type: "boolean", description: "Replace objects already at the keys (default: such files are refused)" },
];

export const uploadCommand: Command = {
  path: ["upload"],
  section: "transfer",
  title: "Upload files or directories",
  description:
    "Uploads each file straight to storage through presigned URLs: one PUT below --threshold, a parallel multipart upload above it. " +
    "Failed parts are retried with backoff; an interrupted multipart upload resumes where it stopped when the same command runs again. " +
    "Directories are uploaded recursively.",
  positionals: [{ name: "files", required: true, variadic: true, description: "Files and directories" }],
  flags,
  notes:
    "Examples:\n  media upload photo.jpg --bucket photos\n  media upload ./shoot --bucket photos --prefix 2026/march --tags beach,summer\n  media upload film.mov --bucket videos --part-size 64MiB --concurrency 8",
  async run(ctx, args) {
    const v = args.values as {
      bucket: string;
      key?: string;
      prefix?: string;
      tags?: string[];
      contentType?: string;
      threshold?: number;
      partSize?: number;
      concurrency?: number;
      retries?: number;
      resume?: boolean;
      progress?: boolean;
      force?: boolean;
    };
    const partSize = v.partSize ?? UPLOAD_DEFAULTS.partSize;
    if (partSize < MIN_PART || partSize > MAX_PART) throw new UsageError(`--part-size must be between 5MiB and 5GiB (got ${humanBytes(partSize)})`, "upload");
    const concurrency = v.concurrency ?? UPLOAD_DEFAULTS.concurrency;
    if (concurrency < 1 || concurrency > 64) throw new UsageError("--concurrency must be between 1 and 64", "upload");
    const retries = v.retries ?? UPLOAD_DEFAULTS.retries;
    if (retries < 1) throw new UsageError("--retries must be at least 1", "upload");
    const threshold = v.threshold ?? UPLOAD_DEFAULTS.threshold;
    const files = collectFiles(args.positionals, { key: v.key, prefix: v.prefix });

    const client = ctx.client();
    const bucketId = await resolveBucketId(client, v.bucket);
    const showBar = v.progress ?? (ctx.stderrIsTTY && !ctx.globals.quiet && !ctx.globals.json);
    const total = files.reduce((n, f) => n + f.size, 0);
    const progress = showBar
      ? progressBar({ total, files: files.length, write: ctx.err, columns: () => process.stderr.columns ?? 80, verb: "Uploaded" })
      : silentProgress(ctx.globals.quiet ? null : ctx.err);
    const store = new ResumeStore(ctx.env);
    store.prune();
    const uploader = new Uploader(
      ctx,
      client,
      store,
      { bucketId, contentType: v.contentType ?? null, tags: v.tags ?? null, threshold, partSize, concurrency, retries, resume: v.resume ?? true, byteProgress: showBar, force: v.force ?? false },
      progress,
    );

    const onSigint = () => {
      progress.note("interrupted: finished parts are saved; run the same command again to resume");
      process.exit(EXIT.interrupted);
    };
    process.once("SIGINT", onSigint);
    const results: (UploadResult | UploadFailure)[] = new Array(files.length);
    let next = 0;
    let interrupted: Interrupted | null = null;
    const worker = async () => {
      while (next < files.length && !interrupted) {
        const i = next++;
        const file = files[i]!;
        try {
          const r = await uploader.upload(file);
          results[i] = r;
          if (!ctx.globals.json) progress.around(() => ctx.out(describeResult(r)));
        } catch (err) {
          if (err instanceof Interrupted) {
            interrupted = err;
            return;
          }
          if (!(err instanceof ApiError || err instanceof StorageError)) throw err;
          results[i] = { file: file.path, key: file.key, error: { code: err.code, message: err.message } };
          progress.note(`error: ${file.key}: ${err.message}`);
          if (err instanceof ApiError && (err.code === "unauthorized" || err.code === "forbidden")) next = files.length;
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
    } finally {
      process.off("SIGINT", onSigint);
    }
    if (interrupted) throw interrupted;
    progress.finish();
    const done = results.filter(Boolean);
    if (ctx.globals.json) ctx.out(renderJson(done));
    const failures = done.filter((r): r is UploadFailure => "error" in r);
    if (failures.length === 0) return EXIT.ok;
    if (!ctx.globals.json) ctx.err(`${failures.length} of ${files.length} uploads failed\n`);
    const first = failures[0]!.error;
    return exitCodeOf(new ApiError(0, first.code, first.message));
  },
};

function describeResult(r: UploadResult): string {
  const how = r.multipart ? `, ${r.parts} parts${r.partsReused ? ` (${r.partsReused} reused)` : ""}` : "";
  return `${r.key}  ${humanBytes(r.size)}  ${r.contentType}${how}  id ${r.id}\n`;
}
