import { existsSync, realpathSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { findTool } from "../tools/registry.ts";
import { resolveBucketId } from "./buckets.ts";
import { ApiError, type RestClient } from "./client.ts";
import type { Context } from "./context.ts";
import { UsageError } from "./flags.ts";
import type { ProgressSink } from "./progress.ts";
import { ResumeStore } from "./resume.ts";
import { getBytes, StorageError } from "./transfer.ts";
import { collectFiles, type LocalFile, UPLOAD_DEFAULTS, Uploader } from "./upload.ts";

/**
 * Tools only `media mcp` offers: it runs on the user's machine, so it can move bytes between
 * the local disk and storage that a remote agent could only hand over through presigned URLs.
 * They stream with the CLI's own transfer code (multipart above 16 MiB, retries, resume) and
 * touch nothing outside the roots: the directories the MCP client declares (roots/list) and
 * those given with `--root`. A path is checked after every symlink and `..` in it is resolved,
 * so neither leads out.
 */

/** A refusal the agent can act on: which field, what was wrong, what to send instead. */
export class LocalFileError extends Error {
  constructor(
    readonly code: "validation_error" | "forbidden" | "not_found" | "conflict",
    message: string,
  ) {
    super(message);
  }
}

const pathList = { type: "array", items: { type: "string" }, minItems: 1, maxItems: 100 } as const;

/** tools/list entries: terse, as the remote tools' are. */
export const LOCAL_TOOLS = [
  {
    name: "upload_files",
    title: "Upload local files",
    description:
      "Uploads files or directories (recursively) from this machine into a bucket, streamed with resumable multipart uploads. Only paths inside the client's roots or media mcp --root. Existing keys are overwritten.",
    inputSchema: {
      type: "object",
      properties: {
        paths: { ...pathList, description: "Absolute paths of files or directories (relative ones start at the first root)" },
        bucket: { type: "string", description: "Bucket name or id" },
        prefix: { type: "string", description: "Key prefix; a file's key is the prefix and its path below the directory given (or its name)" },
        key: { type: "string", description: "The key of a single file (instead of prefix)" },
        tags: { type: "array", items: { type: "string" }, maxItems: 10, description: "Tag names for every object" },
      },
      required: ["paths", "bucket"],
    },
    outputSchema: {
      type: "object",
      properties: {
        uploaded: { type: "array", items: { type: "object", description: "file, key, id, size, contentType, multipart" } },
        failed: { type: "array", items: { type: "object", description: "file, key, error {code, message}" } },
      },
      required: ["uploaded", "failed"],
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  },
  {
    name: "download_to",
    title: "Download to a local path",
    description:
      "Downloads a media object's bytes to a file on this machine (a directory: the key's file name in it), streamed. Only inside the client's roots or media mcp --root; an existing file needs overwrite: true.",
    inputSchema: {
      type: "object",
      properties: {
        id: { type: "string", description: "Media object id" },
        path: { type: "string", description: "Absolute file or directory path (a relative one starts at the first root)" },
        overwrite: { type: "boolean", description: "Replace an existing file; default false" },
      },
      required: ["id", "path"],
    },
    outputSchema: {
      type: "object",
      properties: { id: { type: "string" }, key: { type: "string" }, file: { type: "string" }, size: { type: "integer" } },
      required: ["id", "key", "file", "size"],
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  },
] as const;

export type LocalToolName = (typeof LOCAL_TOOLS)[number]["name"];
export const isLocalTool = (name: unknown): name is LocalToolName => LOCAL_TOOLS.some((t) => t.name === name);

/** Directories from `file://` root URIs (others are not on this disk). */
export function rootsFromUris(roots: readonly { uri: string }[]): string[] {
  return roots.filter((r) => r.uri.startsWith("file://")).map((r) => fileURLToPath(r.uri));
}

/** The real directories the tools may use: symlinks in the roots themselves are resolved once. */
export function realRoots(dirs: readonly string[]): string[] {
  const out: string[] = [];
  for (const dir of dirs) {
    try {
      const real = realpathSync(dir);
      if (statSync(real).isDirectory()) out.push(real);
    } catch {
      // A root that does not exist holds nothing to read or write.
    }
  }
  return [...new Set(out)];
}

function within(real: string, roots: readonly string[]): boolean {
  return roots.some((root) => real === root || real.startsWith(root.endsWith(sep) ? root : root + sep));
}

function outside(field: string, given: string, roots: readonly string[]): LocalFileError {
  return new LocalFileError(
    "forbidden",
    `${field}: ${given} is outside the allowed roots (${roots.join(", ")}), after following symlinks and ..; send a path inside one of them, or start media mcp with --root <dir> (or add the directory to the client's roots)`,
  );
}

function absolute(path: string, roots: readonly string[]): string {
  return isAbsolute(path) ? path : resolve(roots[0]!, path);
}

/** An existing path, resolved through every symlink, refused unless inside a root. */
export function existingInside(field: string, path: string, roots: readonly string[]): string {
  const abs = absolute(path, roots);
  let real: string;
  try {
    real = realpathSync(abs);
  } catch {
    throw new LocalFileError("not_found", `${field}: ${path} does not exist; send the path of an existing file or directory inside ${roots.join(", ")}`);
  }
  if (!within(real, roots)) throw outside(field, path, roots);
  return real;
}

/**
 * Where a download may write: an existing directory inside a root (the file goes in it), or a
 * file whose directory is inside a root. The directory is resolved through symlinks; the name
 * cannot be `..`. An existing target is itself resolved, so a symlink cannot point the write out.
 */
export function targetInside(path: string, name: string, roots: readonly string[]): string {
  const abs = absolute(path, roots);
  if (existsSync(abs) && statSync(abs).isDirectory()) return join(existingInside("path", abs, roots), name);
  const file = basename(abs);
  if (file === "" || file === "." || file === "..") throw new LocalFileError("validation_error", `path: ${path} names no file; send a file path or an existing directory`);
  const dir = existingInside("path", dirname(abs), roots);
  const target = join(dir, file);
  if (existsSync(target)) return existingInside("path", target, roots);
  return target;
}

export interface LocalCall {
  client: RestClient;
  ctx: Context;
  roots: string[];
  /** Bytes done of the total, for progress notifications. */
  progress: (done: number, total: number, message: string) => void;
}

interface UploadInput {
  paths: string[];
  bucket: string;
  prefix?: string;
  key?: string;
  tags?: string[];
}

function strings(value: unknown, field: string, opts: { min?: number; max: number }): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || v === "") || value.length < (opts.min ?? 0) || value.length > opts.max) {
    throw new LocalFileError("validation_error", `${field}: must be a list of ${opts.min ?? 0} to ${opts.max} non-empty strings; send e.g. ["/home/me/photos"]`);
  }
  return value as string[];
}

function text(value: unknown, field: string, required: boolean): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== "string" || value === "") throw new LocalFileError("validation_error", `${field}: must be a non-empty string${required ? " (required)" : ""}`);
  return value;
}

/** A sink counting bytes for progress notifications, at most one per 64 KiB or per file. */
function notifyingSink(total: number, progress: LocalCall["progress"]): ProgressSink {
  let done = 0;
  let label = "";
  return {
    add: (n) => {
      done += n;
      progress(done, total, `${label}: ${done} of ${total} bytes`);
    },
    skip: (n) => {
      done += n;
    },
    label: (t) => {
      label = t;
    },
    fileDone() {},
    note() {},
    around: (w) => w(),
    finish() {},
  };
}

export async function uploadFiles(args: Record<string, unknown>, call: LocalCall): Promise<{ uploaded: unknown[]; failed: unknown[] }> {
  const input: UploadInput = {
    paths: strings(args.paths, "paths", { min: 1, max: 100 }),
    bucket: text(args.bucket, "bucket", true)!,
    ...(args.prefix !== undefined ? { prefix: text(args.prefix, "prefix", false)! } : {}),
    ...(args.key !== undefined ? { key: text(args.key, "key", false)! } : {}),
    ...(args.tags !== undefined ? { tags: strings(args.tags, "tags", { max: 10 }) } : {}),
  };
  const unknown = Object.keys(args).filter((k) => !["paths", "bucket", "prefix", "key", "tags"].includes(k));
  if (unknown.length) throw new LocalFileError("validation_error", `${unknown[0]}: unknown field; send paths, bucket and optionally prefix, key, tags`);
  const real = input.paths.map((p, i) => existingInside(`paths.${i}`, p, call.roots));
  let files: LocalFile[];
  try {
    files = collectFiles(real, { ...(input.key !== undefined ? { key: input.key } : {}), ...(input.prefix !== undefined ? { prefix: input.prefix } : {}) });
  } catch (err) {
    if (err instanceof UsageError) throw new LocalFileError("validation_error", `paths: ${err.message.replace("--key", "key").replace("--prefix", "prefix")}`);
    throw err;
  }
  // A directory may hold symlinks to files elsewhere: each file is checked where it really is.
  for (const f of files) {
    if (!within(realpathSync(f.path), call.roots)) throw outside("paths", f.path, call.roots);
  }
  const bucketId = await resolveBucketId(call.client, input.bucket);
  const total = files.reduce((n, f) => n + f.size, 0);
  call.progress(0, total, `${files.length} file${files.length === 1 ? "" : "s"}, ${total} bytes to upload`);
  const uploader = new Uploader(
    call.ctx,
    call.client,
    new ResumeStore(call.ctx.env),
    // As before the CLI gained --force: the bridge's upload_files replaces what a key holds.
    { bucketId, contentType: null, tags: input.tags ?? null, ...UPLOAD_DEFAULTS, resume: true, byteProgress: true, force: true },
    notifyingSink(total, call.progress),
  );
  const uploaded: unknown[] = [];
  const failed: unknown[] = [];
  for (const file of files) {
    try {
      const r = await uploader.upload(file);
      uploaded.push({ file: r.file, key: r.key, id: r.id, size: r.size, contentType: r.contentType, multipart: r.multipart });
    } catch (err) {
      if (!(err instanceof ApiError || err instanceof StorageError)) throw err;
      failed.push({ file: file.path, key: file.key, error: { code: err.code, message: err.message } });
      if (err instanceof ApiError && (err.code === "unauthorized" || err.code === "forbidden")) break;
    }
  }
  return { uploaded, failed };
}

export async function downloadTo(args: Record<string, unknown>, call: LocalCall): Promise<{ id: string; key: string; file: string; size: number }> {
  const id = text(args.id, "id", true)!;
  const path = text(args.path, "path", true)!;
  if (args.overwrite !== undefined && typeof args.overwrite !== "boolean") throw new LocalFileError("validation_error", "overwrite: must be true or false");
  const unknown = Object.keys(args).filter((k) => !["id", "path", "overwrite"].includes(k));
  if (unknown.length) throw new LocalFileError("validation_error", `${unknown[0]}: unknown field; send id, path and optionally overwrite`);
  // Checked before anything is asked of the service: a refused path costs nothing.
  existingInside("path", existsSync(absolute(path, call.roots)) ? path : dirname(absolute(path, call.roots)), call.roots);
  const signed = await call.client.call<{ url: string; key: string }>(findTool("presign_download")!, { objectId: id });
  const name = signed.key.slice(signed.key.lastIndexOf("/") + 1) || id;
  const target = targetInside(path, name, call.roots);
  if (existsSync(target) && args.overwrite !== true) throw new LocalFileError("conflict", `path: ${target} exists; send overwrite: true to replace it, or another path`);
  const response = await getBytes(signed.url);
  const expected = Number(response.headers.get("content-length") ?? Number.NaN);
  const total = Number.isFinite(expected) ? expected : 0;
  call.progress(0, total, `downloading ${signed.key}`);
  // Written beside the target and renamed when complete, so a broken download never looks finished.
  const partial = `${target}.part`;
  const sink = Bun.file(partial).writer({ highWaterMark: 1024 * 1024 });
  let written = 0;
  try {
    for await (const chunk of response.body) {
      sink.write(chunk);
      written += chunk.byteLength;
      call.progress(written, Math.max(total, written), `${signed.key}: ${written} bytes`);
    }
    await sink.end();
  } catch (err) {
    rmSync(partial, { force: true });
    throw new StorageError(0, "network_error", `download interrupted after ${written} bytes: ${(err as Error).message}`);
  }
  if (Number.isFinite(expected) && written !== expected) {
    rmSync(partial, { force: true });
    throw new ApiError(0, "size_mismatch", `received ${written} bytes, storage announced ${expected}`);
  }
  renameSync(partial, target);
  return { id, key: signed.key, file: target, size: written };
}
