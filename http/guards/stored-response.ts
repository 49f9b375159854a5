import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * A response as kept for replay (status and body), plus the few headers that
 * belong to the representation, so non-JSON answers replay faithfully: a 302 keeps its
 * Location, a download its Content-Disposition. Per-request headers (X-Request-Id, RateLimit)
 * are not kept; the replay gets fresh ones.
 */
export interface StoredResponse {
  status: number;
  headers: [string, string][];
  /** Base64 of the body bytes, whatever the content type. */
  body: string;
}

const KEPT_HEADERS = ["content-type", "location", "content-disposition", "content-language", "content-encoding", "cache-control", "etag", "last-modified"];

/**
 * Reads the body so it can be stored, and returns a response to send in place of the
 * consumed one. A body declared larger than `maxBytes` is passed through untouched and not
 * stored; one that turns out larger once read is sent but not stored (stored: null). Mutating
 * routes answer small JSON, so reading it whole costs a couple of microseconds (a streamed
 * read costs five times that).
 */
export async function capture(response: Response, maxBytes: number): Promise<{ response: Response; stored: StoredResponse | null }> {
  if (Number(response.headers.get("content-length") ?? 0) > maxBytes) return { response, stored: null };
  const bytes = Buffer.from(await response.arrayBuffer());
  const sent = new Response(bytes.byteLength === 0 ? null : bytes, response);
  if (bytes.byteLength > maxBytes) return { response: sent, stored: null };
  const headers = KEPT_HEADERS.flatMap((name): [string, string][] => {
    const value = response.headers.get(name);
    return value === null ? [] : [[name, value]];
  });
  return { response: sent, stored: { status: response.status, headers, body: bytes.toString("base64") } };
}

export function replay(stored: StoredResponse): Response {
  const body = Buffer.from(stored.body, "base64");
  const response = new Response(body.byteLength === 0 ? null : body, { status: stored.status, headers: stored.headers });
  response.headers.set("idempotency-replayed", "true");
  return response;
}

// AES-256-GCM: iv (12) | tag (16) | ciphertext, base64. The key is per request scope (see
// sealingKey in domain/guards/idempotency.ts), so the store holds nothing it can read.
export function seal(stored: StoredResponse, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const text = Buffer.concat([cipher.update(JSON.stringify(stored), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), text]).toString("base64");
}

/** null when the record does not open with this key (corrupted, or written by other code). */
export function unseal(sealed: string, key: Buffer): StoredResponse | null {
  try {
    const raw = Buffer.from(sealed, "base64");
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    return JSON.parse(text) as StoredResponse;
  } catch {
    return null;
  }
}
