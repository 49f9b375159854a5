import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { configDir, type Env, writePrivate } from "./config.ts";

/**
 * What an interrupted multipart upload needs to carry on: its uploadId and the ETag of every
 * part storage already holds. One file per upload in `<config dir>/uploads/`, keyed by
 * service, bucket, key, file size and modification time, so a changed file starts over.
 */
export interface UploadState {
  version: 1;
  url: string;
  bucketId: string;
  key: string;
  path: string;
  size: number;
  mtimeMs: number;
  partSize: number;
  uploadId: string;
  contentType: string | null;
  tags: string[] | null;
  /** partNumber -> ETag */
  parts: Record<string, string>;
  /** Set once complete-upload succeeded: only confirm is left. */
  completed?: boolean;
  createdAt: string;
}

export interface StateIdentity {
  url: string;
  bucketId: string;
  key: string;
  size: number;
  mtimeMs: number;
}

/** Multipart uploads expire on the server after a day without activity; their files go after a week. */
const STALE_MS = 7 * 24 * 3600_000;

export class ResumeStore {
  readonly dir: string;
  constructor(env: Env) {
    this.dir = join(configDir(env), "uploads");
  }

  fileFor(id: StateIdentity): string {
    const hash = new Bun.CryptoHasher("sha256").update(JSON.stringify([id.url, id.bucketId, id.key, id.size, Math.trunc(id.mtimeMs)])).digest("hex");
    return join(this.dir, `${hash.slice(0, 32)}.json`);
  }

  load(id: StateIdentity): UploadState | null {
    const file = this.fileFor(id);
    if (!existsSync(file)) return null;
    try {
      const state = JSON.parse(readFileSync(file, "utf8")) as UploadState;
      const same = state.version === 1 && state.url === id.url && state.bucketId === id.bucketId && state.key === id.key && state.size === id.size && Math.trunc(state.mtimeMs) === Math.trunc(id.mtimeMs);
      return same ? state : null;
    } catch {
      return null;
    }
  }

  /** Written after every part; atomic, so a kill mid-write leaves the previous version. */
  save(state: UploadState): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writePrivate(this.fileFor(state), JSON.stringify(state));
  }

  remove(id: StateIdentity): void {
    rmSync(this.fileFor(id), { force: true });
  }

  prune(now = Date.now()): void {
    if (!existsSync(this.dir)) return;
    for (const name of readdirSync(this.dir)) {
      const file = join(this.dir, name);
      try {
        if (now - statSync(file).mtimeMs > STALE_MS) rmSync(file, { force: true });
      } catch {}
    }
  }
}
