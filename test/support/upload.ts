import { expect } from "bun:test";
import type { Api } from "./http.ts";

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
