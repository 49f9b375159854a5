import { expect } from "bun:test";
import { eventually, WAIT_CEILING_MS } from "./eventually.ts";
import type { Api } from "./http.ts";
import { png } from "./media-files.ts";

/** The single-shot flow as a client runs it: presign, PUT the bytes to storage, confirm. */
export async function upload(
  api: Api,
  bucketId: string,
  key: string,
  bytes: Uint8Array | string,
  extra: { contentType?: string; size?: number; tags?: string[] } = {},
) {
  // A copy, so Buffers (possibly over a shared pool) are a plain ArrayBuffer-backed body.
  const body = typeof bytes === "string" ? new TextEncoder().encode(bytes) : new Uint8Array(bytes);
  const presigned = await api.post("/api/presign/upload", { bucketId, key, ...extra });
  expect(presigned.status).toBe(200);
  const put = await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body });
  expect(put.status).toBe(200);
  const confirmed = await api.post("/api/presign/confirm", { bucketId, key });
  expect(confirmed.status).toBe(200);
  return confirmed.body;
}

/** Deterministic bytes of a given size (a repeating pattern keyed by `seed`). */
export function bytesOf(size: number, seed = 1): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed * 7) & 0xff;
  return out;
}

export function sha256(data: Uint8Array | ArrayBuffer): string {
  return new Bun.CryptoHasher("sha256").update(data).digest("hex");
}

/** A 64x48 PNG uploaded into a new bucket `bucketName`, once its thumbnail is ready (renders then read it). Returns its id. */
export async function pictureWithThumbnail(api: Api, bucketName: string): Promise<string> {
  const bucket = (await api.post("/api/buckets", { name: bucketName })).body;
  const id = (await upload(api, bucket.id, "photo.png", await png(64, 48), { contentType: "image/png" })).id as string;
  await eventually(async () => ((await api.get(`/api/media/${id}`)).body.thumbnail?.state === "ready" ? true : undefined), {
    timeoutMs: WAIT_CEILING_MS,
    what: "the thumbnail",
  });
  return id;
}
