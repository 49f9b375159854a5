import { createHash, createHmac } from "node:crypto";

/** SigV4 primitives shared by the presigner and the embedded storage node's verifier. */

export const ALGORITHM = "AWS4-HMAC-SHA256";
export const UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD";

export const sha256Hex = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");
export const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();

/** AWS UriEncode: everything but A-Z a-z 0-9 - _ . ~ (and "/" when asked) as uppercase %XX of UTF-8. */
export function uriEncode(s: string, keepSlash: boolean): string {
  const e = encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? e.replace(/%2F/g, "/") : e;
}

export function signingKey(secret: string, shortDate: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, shortDate), region), service), "aws4_request");
}

/** "20261122T110000Z" */
export function amzDate(d: Date): string {
  return d.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

/** Sorted, encoded query string as the canonical request wants it. */
export function canonicalQuery(params: [string, string][]): string {
  return params
    .map(([k, v]) => [uriEncode(k, false), uriEncode(v, false)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}
