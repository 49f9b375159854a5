// Multipart uploads. Each upload is a directory:
//   uploads/<uploadId>/upload.json            bucket, key, object fields for the final object
//   uploads/<uploadId>/part-<n>.json          part sidecar (etag, size, data file)
//   uploads/<uploadId>/part-<n>.<random>.data part bytes
// Parts are published like objects (rename + atomic sidecar), so parallel
// UploadPart calls, including re-uploads of the same part number, are safe.

import { createHash, randomBytes } from "node:crypto";
import { mkdir, open, readdir, rename, rm, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { Errors, S3Error } from "./errors.ts";
import { isNotFound, randomName, readJson, readRange, type TempFile, writeFileAtomic } from "./files.ts";
import { compareKeys } from "./listing.ts";
import { type ObjectFields, type ObjectMeta, type Store } from "./store.ts";

export const MIN_PART_SIZE = 5 * 1024 * 1024;
export const MAX_PARTS = 10000;

export interface UploadInfo {
  uploadId: string;
  bucket: string;
  key: string;
  initiated: number;
  fields: ObjectFields;
}

export interface PartInfo {
  partNumber: number;
  etag: string;
  size: number;
  lastModified: number;
  data: string;
}

interface UploadState {
  info: UploadInfo;
  parts: Map<number, PartInfo>;
  finished: boolean;
}

const unquote = (etag: string) => etag.trim().replace(/^"(.*)"$/, "$1");

export class Uploads {
  private readonly uploads = new Map<string, UploadState>();

  private constructor(private readonly store: Store) {}

  static async load(store: Store): Promise<Uploads> {
    const u = new Uploads(store);
    for (const id of await readdir(store.uploadsDir)) {
      const dir = join(store.uploadsDir, id);
      const info = await readJson<UploadInfo>(join(dir, "upload.json"));
      if (!info || info.uploadId !== id || !store.bucket(info.bucket)) {
        await rm(dir, { recursive: true, force: true });
        continue;
      }
      const st: UploadState = { info, parts: new Map(), finished: false };
      const files = await readdir(dir);
      for (const f of files) {
        if (!/^part-\d+\.json$/.test(f)) continue;
        const p = await readJson<PartInfo>(join(dir, f));
        if (p && basename(p.data) === p.data) st.parts.set(p.partNumber, p);
      }
      const referenced = new Set([...st.parts.values()].map((p) => p.data));
      for (const f of files) if (f.endsWith(".data") && !referenced.has(f)) await unlink(join(dir, f)).catch(() => {});
      u.uploads.set(id, st);
    }
    return u;
  }

  private dir(uploadId: string): string {
    return join(this.store.uploadsDir, uploadId);
  }

  async create(bucket: string, key: string, fields: ObjectFields): Promise<UploadInfo> {
    if (!this.store.bucket(bucket)) throw Errors.noSuchBucket(bucket);
    const uploadId = randomBytes(24).toString("base64url");
    const info: UploadInfo = { uploadId, bucket, key, initiated: Date.now(), fields };
    await mkdir(this.dir(uploadId), { recursive: true });
    await writeFileAtomic(this.store.tmpDir, join(this.dir(uploadId), "upload.json"), JSON.stringify(info));
    this.uploads.set(uploadId, { info, parts: new Map(), finished: false });
    return info;
  }

  /** The upload, if it exists and belongs to bucket/key (S3 reports NoSuchUpload otherwise). */
  get(bucket: string, key: string, uploadId: string): UploadState {
    if (!this.store.bucket(bucket)) throw Errors.noSuchBucket(bucket);
    const st = this.uploads.get(uploadId);
    if (!st || st.finished || st.info.bucket !== bucket || st.info.key !== key) throw Errors.noSuchUpload(uploadId);
    return st;
  }

  async putPart(st: UploadState, partNumber: number, tmp: TempFile): Promise<PartInfo> {
    const { uploadId } = st.info;
    return this.store.locks.run(`p\0${uploadId}\0${partNumber}`, async () => {
      if (st.finished) throw Errors.noSuchUpload(uploadId);
      const dir = this.dir(uploadId);
      const data = `part-${partNumber}.${randomName()}.data`;
      await rename(tmp.path, join(dir, data)).catch((e) => {
        throw isNotFound(e) ? Errors.noSuchUpload(uploadId) : e;
      });
      const part: PartInfo = { partNumber, etag: tmp.md5, size: tmp.size, lastModified: Date.now(), data };
      try {
        await writeFileAtomic(this.store.tmpDir, join(dir, `part-${partNumber}.json`), JSON.stringify(part));
      } catch (e) {
        await unlink(join(dir, data)).catch(() => {});
        throw isNotFound(e) ? Errors.noSuchUpload(uploadId) : e;
      }
      if (st.finished) throw Errors.noSuchUpload(uploadId);
      const old = st.parts.get(partNumber);
      st.parts.set(partNumber, part);
      if (old) await unlink(join(dir, old.data)).catch(() => {});
      return part;
    });
  }

  listParts(st: UploadState): PartInfo[] {
    return [...st.parts.values()].sort((a, b) => a.partNumber - b.partNumber);
  }

  async complete(st: UploadState, requested: { partNumber: number; etag: string }[]): Promise<ObjectMeta> {
    const { uploadId, bucket, key } = st.info;
    if (requested.length === 0) throw Errors.malformedXML();
    const chosen: PartInfo[] = [];
    for (let i = 0; i < requested.length; i++) {
      const r = requested[i]!;
      if (i > 0 && r.partNumber <= requested[i - 1]!.partNumber)
        throw new S3Error("InvalidPartOrder", "The list of parts was not in ascending order. The parts list must be specified in order by part number.", 400);
      const part = st.parts.get(r.partNumber);
      if (!part || part.etag !== unquote(r.etag))
        throw new S3Error("InvalidPart", "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.", 400, {
          UploadId: uploadId,
          PartNumber: String(r.partNumber),
          ETag: r.etag,
        });
      chosen.push(part);
    }
    chosen.forEach((p, i) => {
      if (i < chosen.length - 1 && p.size < MIN_PART_SIZE)
        throw new S3Error("EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size.", 400, {
          ETag: p.etag,
          MinSizeAllowed: String(MIN_PART_SIZE),
          PartNumber: String(p.partNumber),
          ProposedSize: String(p.size),
        });
    });

    const dir = this.dir(uploadId);
    async function* concatenated(): AsyncGenerator<Uint8Array> {
      for (const p of chosen) {
        const fh = await open(join(dir, p.data), "r").catch((e) => {
          throw isNotFound(e) ? Errors.noSuchUpload(uploadId) : e;
        });
        try {
          yield* readRange(fh, 0, p.size, 4 << 20);
        } finally {
          await fh.close();
        }
      }
    }
    const tmp = await this.store.writeTemp(concatenated());
    const md5s = Buffer.concat(chosen.map((p) => Buffer.from(p.etag, "hex")));
    const etag = `${createHash("md5").update(md5s).digest("hex")}-${chosen.length}`;
    try {
      if (st.finished) throw Errors.noSuchUpload(uploadId);
      const meta = await this.store.putObject(bucket, key, tmp, st.info.fields, etag);
      await this.remove(st);
      return meta;
    } catch (e) {
      await this.store.discard(tmp);
      throw e;
    }
  }

  async abort(st: UploadState): Promise<void> {
    await this.remove(st);
  }

  private async remove(st: UploadState): Promise<void> {
    st.finished = true;
    this.uploads.delete(st.info.uploadId);
    const dir = this.dir(st.info.uploadId);
    await unlink(join(dir, "upload.json")).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }

  /** In-progress uploads of a bucket, ordered by key then initiation time (as S3 lists them). */
  list(bucket: string): UploadInfo[] {
    return [...this.uploads.values()]
      .filter((u) => u.info.bucket === bucket && !u.finished)
      .map((u) => u.info)
      .sort((a, b) => compareKeys(a.key, b.key) || a.initiated - b.initiated || compareKeys(a.uploadId, b.uploadId));
  }

  /** DeleteBucket drops whatever uploads were left in it. */
  async dropBucket(bucket: string): Promise<void> {
    for (const st of [...this.uploads.values()]) if (st.info.bucket === bucket) await this.remove(st);
  }
}
