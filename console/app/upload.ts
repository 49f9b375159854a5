import { signal } from "@preact/signals";
import { ApiError, call, describeError, randomId, sleep } from "./api.ts";
import type { MediaObject } from "./ui/media.tsx";

/**
 * Uploads straight to storage: presign, PUT the bytes to the signed URL, confirm. Files above
 * the threshold go in parts, several at once; a part that fails is tried again a few times,
 * and a file whose part still fails can be retried from where it stopped (parts already
 * stored are not sent again). Cancelling aborts the requests and the multipart upload, which
 * releases its quota reservation.
 */
export const MULTIPART_THRESHOLD = 8 * 1024 * 1024;
/** Storage's smallest part (except the last). */
export const PART_SIZE = 5 * 1024 * 1024;
const PARTS_AT_ONCE = 4;
const FILES_AT_ONCE = 3;
const PART_ATTEMPTS = 3;

export type UploadState = "queued" | "uploading" | "confirming" | "conflict" | "done" | "failed" | "canceled" | "skipped";

/** What to do with a file whose key is taken: the person's answer, for this file or for all. */
export type Conflict = "replace" | "keep-both" | "skip";

/** An answer given with "apply to all": later conflicts of the session take it without asking. */
export const conflictForAll = signal<Conflict | null>(null);

class Canceled extends Error {}
/** Storage refused the PUT's write condition: another writer changed the key since the URL was signed. */
class Taken extends Error {}
/** The file is skipped: nothing was written. */
class Skipped extends Error {}

/** "photo.png" -> "photo (2).png": the name "keep both" tries, counting up. */
export function numbered(key: string, n: number): string {
  const slash = key.lastIndexOf("/") + 1;
  const dot = key.lastIndexOf(".");
  const cut = dot > slash ? dot : key.length;
  return `${key.slice(0, cut)} (${n})${key.slice(cut)}`;
}

export class Upload {
  readonly id = randomId();
  readonly multipart: boolean;
  readonly partCount: number;
  readonly state = signal<UploadState>("queued");
  readonly loaded = signal(0);
  readonly error = signal<string | null>(null);
  readonly partsDone = signal(0);
  readonly failedParts = signal<number[]>([]);
  /** The key the file goes to: "keep both" changes it to a free one. */
  readonly target = signal("");
  result: MediaObject | null = null;
  /** Set once the person chose "replace": the upload may write over what the key holds. */
  private replace = false;
  private decide: ((c: Conflict) => void) | null = null;
  private uploadId: string | null = null;
  private readonly etags = new Map<number, string>();
  private readonly partLoaded = new Map<number, number>();
  private readonly requests = new Set<XMLHttpRequest>();
  private canceled = false;

  constructor(
    readonly file: File,
    readonly bucketId: string,
    readonly key: string,
    readonly tags: string[],
    private readonly onDone: (upload: Upload) => void,
  ) {
    this.multipart = file.size > MULTIPART_THRESHOLD;
    this.target.value = key;
    this.partCount = this.multipart ? Math.ceil(file.size / PART_SIZE) : 1;
  }

  get contentType(): string | undefined {
    // The browser's guess is sent when it has one; else the service guesses from the key.
    return /^[\w.+-]+\/[\w.+-]+$/.test(this.file.type) ? this.file.type : undefined;
  }

  async run(): Promise<void> {
    if (this.canceled) return;
    this.state.value = "uploading";
    this.error.value = null;
    this.failedParts.value = [];
    try {
      for (;;) {
        try {
          if (this.multipart) await this.sendParts();
          else await this.sendWhole();
          break;
        } catch (err) {
          // Someone wrote the key between our look and our PUT: ask again, as for any taken key.
          if (!(err instanceof Taken)) throw err;
          await this.resolveConflict();
        }
      }
      this.state.value = "confirming";
      this.result = await call<MediaObject>("presign_confirm", { bucketId: this.bucketId, key: this.target.value });
      this.loaded.value = this.file.size;
      this.state.value = "done";
      this.onDone(this);
    } catch (err) {
      if (err instanceof Skipped) {
        if (!this.canceled) this.state.value = "skipped";
        return;
      }
      if (this.canceled || err instanceof Canceled) return;
      this.state.value = "failed";
      this.error.value = describeError(err);
    }
  }

  private base() {
    const tags = this.tags.length > 0 ? { tags: this.tags } : {};
    const contentType = this.contentType ? { contentType: this.contentType } : {};
    return { bucketId: this.bucketId, key: this.target.value, size: this.file.size, ...contentType, ...tags };
  }

  /** The person's answer (or the one given for all), acted on: replace, a free numbered key, or skip. */
  private async resolveConflict(): Promise<void> {
    const answer = conflictForAll.value ?? (await this.ask());
    this.state.value = "uploading";
    if (answer === "skip") throw new Skipped();
    if (answer === "replace") {
      this.replace = true;
      return;
    }
    this.replace = false;
    for (let n = 2; ; n++) {
      const key = numbered(this.key, n);
      if (!(await this.taken(key))) {
        this.target.value = key;
        return;
      }
    }
  }

  private ask(): Promise<Conflict> {
    this.state.value = "conflict";
    asking.add(this);
    return new Promise((resolve) => (this.decide = resolve));
  }

  /** The answer to "this name exists": `all` applies it to the files asking now and to every later conflict. */
  choose(answer: Conflict, all = false): void {
    if (all) {
      conflictForAll.value = answer;
      for (const other of [...asking]) if (other !== this) other.choose(answer);
    }
    asking.delete(this);
    const d = this.decide;
    this.decide = null;
    d?.(answer);
  }

  /** Is a live object at this key? (A multipart upload has no write condition to tell.) */
  private async taken(key: string): Promise<boolean> {
    const slash = key.lastIndexOf("/") + 1;
    const found = await call<{ data: { key: string }[] }>("media_list", { bucketId: this.bucketId, folder: key.slice(0, slash), search: key.slice(slash), limit: 100 });
    return found.data.some((o) => o.key === key);
  }

  private async sendWhole() {
    const signed = await call<{ url: string; headers: Record<string, string> }>("presign_upload", this.base());
    // The URL is signed with a write condition on what the key holds now: If-Match means it
    // holds an object, which only "replace" may write over.
    const existing = Object.keys(signed.headers).some((h) => h.toLowerCase() === "if-match");
    if (existing && !this.replace) throw new Taken();
    await this.put(signed.url, signed.headers, this.file, (n) => (this.loaded.value = n));
  }

  private async sendParts() {
    if (!this.uploadId && !this.replace && (await this.taken(this.target.value))) throw new Taken();
    if (!this.uploadId) {
      const started = await call<{ uploadId: string }>("presign_create_multipart", this.base());
      this.uploadId = started.uploadId;
    }
    const todo = Array.from({ length: this.partCount }, (_, i) => i + 1).filter((n) => !this.etags.has(n));
    const failed: number[] = [];
    let lastError: unknown = null;
    const worker = async () => {
      for (let n = todo.shift(); n !== undefined; n = todo.shift()) {
        try {
          await this.sendPart(n);
        } catch (err) {
          if (this.canceled) throw new Canceled();
          failed.push(n);
          lastError = err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARTS_AT_ONCE, todo.length) }, worker));
    if (failed.length > 0) {
      this.failedParts.value = failed.sort((a, b) => a - b);
      throw new Error(`Part ${failed.join(", ")} of ${this.partCount} failed: ${describeError(lastError)}. Retry sends only the missing parts.`);
    }
    const parts = [...this.etags].sort((a, b) => a[0] - b[0]).map(([partNumber, etag]) => ({ partNumber, etag }));
    await call("presign_complete_upload", { bucketId: this.bucketId, key: this.target.value, uploadId: this.uploadId, parts });
  }

  private async sendPart(n: number) {
    const start = (n - 1) * PART_SIZE;
    const chunk = this.file.slice(start, Math.min(start + PART_SIZE, this.file.size));
    for (let attempt = 1; ; attempt++) {
      try {
        const signed = await call<{ url: string; headers: Record<string, string> }>("presign_upload_part", {
          bucketId: this.bucketId,
          key: this.target.value,
          uploadId: this.uploadId,
          partNumber: n,
        });
        const etag = await this.put(signed.url, signed.headers, chunk, (loaded) => {
          this.partLoaded.set(n, loaded);
          this.loaded.value = [...this.etags.keys()].reduce((s, p) => s + this.partSize(p), 0) + [...this.partLoaded.values()].reduce((s, v) => s + v, 0);
        });
        this.partLoaded.delete(n);
        if (!etag) throw new Error("storage did not expose the part's ETag (check its CORS rule)");
        this.etags.set(n, etag);
        this.partsDone.value = this.etags.size;
        return;
      } catch (err) {
        this.partLoaded.delete(n);
        if (this.canceled || attempt >= PART_ATTEMPTS || (err instanceof ApiError && err.status < 500 && err.status !== 429 && err.status !== 0)) throw err;
        await sleep(500 * 2 ** (attempt - 1));
      }
    }
  }

  private partSize(n: number): number {
    return Math.min(PART_SIZE, this.file.size - (n - 1) * PART_SIZE);
  }

  /** One PUT to storage with XMLHttpRequest: fetch cannot report upload progress. Resolves with the ETag. */
  private put(url: string, headers: Record<string, string>, body: Blob, progress: (loaded: number) => void): Promise<string | null> {
    return new Promise((resolve, reject) => {
      if (this.canceled) return reject(new Canceled());
      const xhr = new XMLHttpRequest();
      this.requests.add(xhr);
      xhr.open("PUT", url);
      for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
      xhr.upload.onprogress = (e) => progress(e.loaded);
      xhr.onload = () => {
        this.requests.delete(xhr);
        if (xhr.status >= 200 && xhr.status < 300) resolve(xhr.getResponseHeader("etag"));
        else if (xhr.status === 412) reject(new Taken());
        else reject(new Error(`storage answered ${xhr.status}${storageMessage(xhr.responseText)}`));
      };
      xhr.onerror = () => {
        this.requests.delete(xhr);
        reject(new Error("storage could not be reached (network or CORS)"));
      };
      xhr.onabort = () => {
        this.requests.delete(xhr);
        reject(new Canceled());
      };
      xhr.send(body);
    });
  }

  cancel(): void {
    if (this.state.value === "done" || this.state.value === "canceled" || this.state.value === "skipped") return;
    this.canceled = true;
    this.choose("skip");
    for (const xhr of this.requests) xhr.abort();
    this.state.value = "canceled";
    const waiting = queue.indexOf(this);
    if (waiting >= 0) queue.splice(waiting, 1);
    if (this.uploadId) {
      void call("presign_abort_multipart", { bucketId: this.bucketId, key: this.target.value, uploadId: this.uploadId }).catch(() => {});
    }
  }

  retry(): void {
    if (this.state.value !== "failed") return;
    this.state.value = "queued";
    this.error.value = null;
    enqueue(this);
  }
}

function storageMessage(xml: string): string {
  const m = /<Message>([^<]*)<\/Message>/.exec(xml);
  return m ? `: ${m[1]}` : "";
}

export const uploads = signal<Upload[]>([]);
/** Files waiting for an answer to "this name exists". */
const asking = new Set<Upload>();
const queue: Upload[] = [];
let active = 0;

function enqueue(u: Upload) {
  queue.push(u);
  pump();
}

function pump() {
  while (active < FILES_AT_ONCE && queue.length > 0) {
    const next = queue.shift()!;
    active++;
    void next.run().finally(() => {
      active--;
      pump();
    });
  }
}

/** Object key for a dropped file: the folder prefix (if any), then its path inside a dropped folder or its name. */
export function keyFor(file: File, prefix: string): string {
  const rel = (file as File & { webkitRelativePath?: string }).webkitRelativePath || file.name;
  const clean = prefix.trim().replace(/^\/+|\/+$/g, "");
  return clean ? `${clean}/${rel}` : rel;
}

/** `folder`: the open folder ("a/b/" or ""), under which the prefix and the file's own path go. */
export function startUploads(files: File[], bucketId: string, opts: { folder?: string; prefix: string; tags: string[]; onDone: (u: Upload) => void }): Upload[] {
  // "Apply to all" holds for the files chosen together, not for the next ones.
  conflictForAll.value = null;
  const started = files.map((f) => new Upload(f, bucketId, `${opts.folder ?? ""}${keyFor(f, opts.prefix)}`, opts.tags, opts.onDone));
  uploads.value = [...started, ...uploads.value];
  for (const u of started) enqueue(u);
  return started;
}

export function clearFinished(): void {
  uploads.value = uploads.value.filter((u) => u.state.value !== "done" && u.state.value !== "canceled" && u.state.value !== "skipped");
}

export function parseTags(text: string): string[] {
  return [...new Set(text.split(",").map((t) => t.trim()).filter((t) => t !== ""))];
}
