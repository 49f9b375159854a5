// On-disk object store with an in-memory index.
//
// Layout under the data dir:
//   tmp/                                  in-flight writes; wiped at startup
//   buckets/<bucket>/bucket.json          creation date, CORS rules
//   buckets/<bucket>/objects/<hh>/<h>.json           sidecar: key, size, etag, headers, tags...
//   buckets/<bucket>/objects/<hh>/<h>.<random>.data  object bytes (immutable once written)
// where <h> = sha256(key), so no key can name a path outside the data dir.
//
// Publishing a version: rename the fsynced temp file to a fresh .data name, then
// atomically replace the sidecar (the commit point), then unlink the old .data.
// Readers open the .data file named by the index; an open descriptor keeps
// reading the old bytes even if a newer version replaces it meanwhile.

import { type FileHandle, mkdir, open, readdir, rename, rm, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import type { CorsRule } from "./cors.ts";
import { Errors, S3Error } from "./errors.ts";
import { isNotFound, randomName, readJson, sha256Name, type TempFile, writeFileAtomic, writeTemp } from "./files.ts";
import { compareKeys, lowerBound } from "./listing.ts";
import { KeyedLock } from "./lock.ts";
import type { TagSet } from "./tags.ts";

/** Everything about an object that comes from the request rather than the bytes. */
export interface ObjectFields {
  contentType: string;
  /** Stored representation headers: cache-control, content-disposition, content-encoding, ... */
  headers: Record<string, string>;
  /** User metadata without the x-amz-meta- prefix. */
  metadata: Record<string, string>;
  tags: TagSet;
}

export interface ObjectMeta extends ObjectFields {
  key: string;
  size: number;
  /** Unquoted ETag. */
  etag: string;
  /** Milliseconds, truncated to whole seconds as HTTP dates are. */
  lastModified: number;
  /** Data file name, next to the sidecar. */
  data: string;
}

export interface BucketInfo {
  name: string;
  created: number;
  cors?: CorsRule[];
}

interface BucketState {
  info: BucketInfo;
  objects: Map<string, ObjectMeta>;
  /** Sorted key list, built on first listing and then maintained incrementally. */
  sorted?: string[];
  /** Writes between "bucket exists" and "object published"; DeleteBucket must wait for 0. */
  pending: number;
  deleted: boolean;
}

export function isValidBucketName(name: string): boolean {
  return (
    /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name) &&
    !name.includes("..") &&
    !name.includes(".-") &&
    !name.includes("-.") &&
    !/^\d+\.\d+\.\d+\.\d+$/.test(name)
  );
}

export const nowSeconds = () => Math.floor(Date.now() / 1000) * 1000;

export class Store {
  readonly tmpDir: string;
  readonly uploadsDir: string;
  readonly locks = new KeyedLock();
  private readonly bucketsDir: string;
  private readonly buckets = new Map<string, BucketState>();

  private constructor(readonly dir: string) {
    this.tmpDir = join(dir, "tmp");
    this.uploadsDir = join(dir, "uploads");
    this.bucketsDir = join(dir, "buckets");
  }

  static async open(dir: string): Promise<Store> {
    const store = new Store(dir);
    await rm(store.tmpDir, { recursive: true, force: true });
    for (const d of [store.tmpDir, store.uploadsDir, store.bucketsDir]) await mkdir(d, { recursive: true });
    for (const name of await readdir(store.bucketsDir)) {
      if (isValidBucketName(name)) await store.loadBucket(name);
    }
    return store;
  }

  private async loadBucket(name: string): Promise<void> {
    const dir = join(this.bucketsDir, name);
    const info = await readJson<BucketInfo>(join(dir, "bucket.json"));
    if (!info) {
      // bucket.json goes first on delete and last on create: without it the bucket never existed.
      await rm(dir, { recursive: true, force: true });
      return;
    }
    const st: BucketState = { info: { ...info, name }, objects: new Map(), pending: 0, deleted: false };
    const objectsDir = join(dir, "objects");
    for (const fan of await readdir(objectsDir).catch(() => [] as string[])) {
      const fanDir = join(objectsDir, fan);
      const files = await readdir(fanDir);
      const referenced = new Set<string>();
      const sidecars = files.filter((f) => f.endsWith(".json"));
      const metas = await Promise.all(sidecars.map((f) => readJson<ObjectMeta>(join(fanDir, f))));
      metas.forEach((m, i) => {
        if (!m || typeof m.key !== "string" || `${sha256Name(m.key)}.json` !== sidecars[i] || basename(m.data) !== m.data) return;
        st.objects.set(m.key, m);
        referenced.add(m.data);
      });
      // .data files no sidecar points to are leftovers of an interrupted publish.
      for (const f of files) if (f.endsWith(".data") && !referenced.has(f)) await unlink(join(fanDir, f)).catch(() => {});
    }
    this.buckets.set(name, st);
  }

  writeTemp(source: AsyncIterable<Uint8Array>): Promise<TempFile> {
    return writeTemp(this.tmpDir, source);
  }

  async discard(tmp: TempFile): Promise<void> {
    await unlink(tmp.path).catch(() => {});
  }

  // ---- buckets

  listBuckets(): BucketInfo[] {
    return [...this.buckets.values()].map((s) => s.info).sort((a, b) => compareKeys(a.name, b.name));
  }

  bucket(name: string): BucketInfo | undefined {
    return this.buckets.get(name)?.info;
  }

  private state(name: string): BucketState {
    const st = this.buckets.get(name);
    if (!st) throw Errors.noSuchBucket(name);
    return st;
  }

  /** Returns false when the bucket already exists. */
  async createBucket(name: string): Promise<boolean> {
    if (!isValidBucketName(name)) throw new S3Error("InvalidBucketName", "The specified bucket is not valid.", 400, { BucketName: name });
    return this.locks.run(`b\0${name}`, async () => {
      if (this.buckets.has(name)) return false;
      const dir = join(this.bucketsDir, name);
      await mkdir(join(dir, "objects"), { recursive: true });
      const info: BucketInfo = { name, created: Date.now() };
      await writeFileAtomic(this.tmpDir, join(dir, "bucket.json"), JSON.stringify(info));
      this.buckets.set(name, { info, objects: new Map(), pending: 0, deleted: false });
      return true;
    });
  }

  async deleteBucket(name: string): Promise<void> {
    await this.locks.run(`b\0${name}`, async () => {
      const st = this.state(name);
      // Checked and flagged without an await in between, so no write can slip in.
      if (st.objects.size > 0 || st.pending > 0)
        throw new S3Error("BucketNotEmpty", "The bucket you tried to delete is not empty", 409, { BucketName: name });
      st.deleted = true;
      this.buckets.delete(name);
      const dir = join(this.bucketsDir, name);
      await unlink(join(dir, "bucket.json")).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    });
  }

  async setCors(name: string, rules: CorsRule[] | undefined): Promise<void> {
    await this.locks.run(`b\0${name}`, async () => {
      const st = this.state(name);
      const info: BucketInfo = { name, created: st.info.created, ...(rules ? { cors: rules } : {}) };
      await writeFileAtomic(this.tmpDir, join(this.bucketsDir, name, "bucket.json"), JSON.stringify(info));
      st.info = info;
    });
  }

  // ---- objects

  private objectDir(bucket: string, hash: string): string {
    return join(this.bucketsDir, bucket, "objects", hash.slice(0, 2));
  }

  getObject(bucket: string, key: string): ObjectMeta | undefined {
    return this.state(bucket).objects.get(key);
  }

  sortedKeys(bucket: string): readonly string[] {
    const st = this.state(bucket);
    st.sorted ??= [...st.objects.keys()].sort(compareKeys);
    return st.sorted;
  }

  /**
   * The file holding the current version, not opened. Its bytes never change (a newer version is
   * written to a file of another name and this one removed), so whoever opens it reads exactly
   * this version, or finds it gone.
   */
  objectFile(bucket: string, key: string): { meta: ObjectMeta; path: string } {
    const meta = this.state(bucket).objects.get(key);
    if (!meta) throw Errors.noSuchKey(key);
    return { meta, path: this.dataPath(bucket, key, meta) };
  }

  /** The file of the version `meta` of `key`. */
  private dataPath(bucket: string, key: string, meta: ObjectMeta): string {
    return join(this.objectDir(bucket, sha256Name(key)), meta.data);
  }

  /** Open the current version for reading; the handle stays valid if it is replaced meanwhile. */
  async openObject(bucket: string, key: string): Promise<{ meta: ObjectMeta; fh: FileHandle }> {
    const st = this.state(bucket);
    let failed: string | undefined;
    for (;;) {
      const meta = st.objects.get(key);
      if (!meta) throw Errors.noSuchKey(key);
      try {
        return { meta, fh: await open(this.dataPath(bucket, key, meta), "r") };
      } catch (e) {
        // ENOENT means a newer version was published between lookup and open: retry once per version.
        if (!isNotFound(e) || meta.data === failed) throw e;
        failed = meta.data;
      }
    }
  }

  /**
   * Publish tmp as the new version of key. `check` runs under the key lock with the
   * current version (conditional writes). The caller discards tmp if this throws.
   */
  async putObject(
    bucket: string,
    key: string,
    tmp: TempFile,
    fields: ObjectFields,
    etag: string = tmp.md5,
    check?: (current: ObjectMeta | undefined) => void,
  ): Promise<ObjectMeta> {
    const st = this.state(bucket);
    st.pending++;
    try {
      return await this.locks.run(`o\0${bucket}\0${key}`, async () => {
        if (st.deleted) throw Errors.noSuchBucket(bucket);
        check?.(st.objects.get(key));
        const hash = sha256Name(key);
        const dir = this.objectDir(bucket, hash);
        await mkdir(dir, { recursive: true });
        const data = `${hash}.${randomName()}.data`;
        await rename(tmp.path, join(dir, data));
        const meta: ObjectMeta = { key, size: tmp.size, etag, lastModified: nowSeconds(), ...fields, data };
        try {
          await writeFileAtomic(this.tmpDir, join(dir, `${hash}.json`), JSON.stringify(meta));
        } catch (e) {
          await unlink(join(dir, data)).catch(() => {});
          throw e;
        }
        const old = st.objects.get(key);
        st.objects.set(key, meta);
        if (old) await unlink(join(dir, old.data)).catch(() => {});
        else if (st.sorted) st.sorted.splice(lowerBound(st.sorted, key, false), 0, key);
        return meta;
      });
    } finally {
      st.pending--;
    }
  }

  async deleteObject(bucket: string, key: string): Promise<void> {
    this.state(bucket);
    await this.locks.run(`o\0${bucket}\0${key}`, async () => {
      const st = this.state(bucket);
      const old = st.objects.get(key);
      if (!old) return;
      const hash = sha256Name(key);
      const dir = this.objectDir(bucket, hash);
      await unlink(join(dir, `${hash}.json`)).catch((e) => {
        if (!isNotFound(e)) throw e;
      });
      st.objects.delete(key);
      if (st.sorted) {
        const i = lowerBound(st.sorted, key, false);
        if (st.sorted[i] === key) st.sorted.splice(i, 1);
      }
      await unlink(join(dir, old.data)).catch(() => {});
    });
  }

  async setTags(bucket: string, key: string, tags: TagSet): Promise<ObjectMeta> {
    this.state(bucket);
    return this.locks.run(`o\0${bucket}\0${key}`, async () => {
      const st = this.state(bucket);
      const old = st.objects.get(key);
      if (!old) throw Errors.noSuchKey(key);
      const meta = { ...old, tags };
      const hash = sha256Name(key);
      await writeFileAtomic(this.tmpDir, join(this.objectDir(bucket, hash), `${hash}.json`), JSON.stringify(meta));
      st.objects.set(key, meta);
      return meta;
    });
  }
}
