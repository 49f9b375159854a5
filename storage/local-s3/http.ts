// HTTP-level helpers: responses, object representation headers, Range and
// conditional request evaluation, and streaming a file handle as a body.

import type { FileHandle } from "node:fs/promises";
import type { S3Response } from "./context.ts";
import { Errors, S3Error } from "./errors.ts";
import { readRange } from "./files.ts";
import type { ObjectFields, ObjectMeta } from "./store.ts";

export function xmlResponse(body: string, status = 200, headers: Record<string, string> = {}): S3Response {
  return { status, headers: { "content-type": "application/xml", ...headers }, body };
}

export function emptyResponse(status = 200, headers: Record<string, string> = {}): S3Response {
  // 204 responses must not carry Content-Length (RFC 9110 8.6).
  return { status, headers: status === 204 ? headers : { "content-length": "0", ...headers } };
}

export const httpDate = (ms: number) => new Date(ms).toUTCString();
export const isoDate = (ms: number) => new Date(ms).toISOString();

/** Representation headers S3 stores with an object and replays on GET/HEAD. */
export const STORED_HEADERS = ["cache-control", "content-disposition", "content-encoding", "content-language", "expires"] as const;

/** GET/HEAD query parameters that override response headers. */
const OVERRIDES: Record<string, string> = {
  "response-content-type": "content-type",
  "response-content-language": "content-language",
  "response-expires": "expires",
  "response-cache-control": "cache-control",
  "response-content-disposition": "content-disposition",
  "response-content-encoding": "content-encoding",
};

/**
 * Types a browser shows inline without running anything: every other type (HTML, SVG, XML,
 * JavaScript, ...) is served as an attachment, so an object cannot act as a page of the
 * storage origin (stored XSS).
 */
function passive(contentType: string): boolean {
  const t = contentType.split(";")[0]!.trim().toLowerCase();
  if (t === "image/svg+xml") return false;
  return /^(image|video|audio)\//.test(t) || t === "application/pdf" || t === "text/plain";
}

/** What an object served inline may load: its own origin's pictures and media, inline styles, no script. */
const OBJECT_CSP = "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'";

/**
 * What protects the storage origin from the content it serves: no MIME sniffing, a sandbox
 * CSP (no script, no same-origin access, nothing loaded), and active types as attachments.
 * PDFs get the same policy without `sandbox` (browsers refuse to run their PDF viewer in one),
 * and with `object-src 'self'`: Chromium shows a PDF through a plugin embedded in a page it
 * makes, which `default-src 'none'` alone would refuse. Nothing else of the page is allowed.
 */
export function servingHeaders(h: Record<string, string>): void {
  const type = h["content-type"] ?? "";
  h["x-content-type-options"] = "nosniff";
  const pdf = type.split(";")[0]!.trim().toLowerCase() === "application/pdf";
  h["content-security-policy"] = pdf ? `${OBJECT_CSP}; object-src 'self'` : `${OBJECT_CSP}; sandbox`;
  if (!passive(type) && !(h["content-disposition"] ?? "").toLowerCase().startsWith("attachment")) h["content-disposition"] = "attachment";
}

export function objectHeaders(meta: ObjectMeta, query?: Map<string, string>): Record<string, string> {
  const h: Record<string, string> = {
    "content-type": meta.contentType,
    etag: `"${meta.etag}"`,
    "last-modified": httpDate(meta.lastModified),
    "accept-ranges": "bytes",
    ...meta.headers,
  };
  for (const [k, v] of Object.entries(meta.metadata)) h[`x-amz-meta-${k}`] = v;
  if (meta.tags.length > 0) h["x-amz-tagging-count"] = String(meta.tags.length);
  if (query) for (const [param, header] of Object.entries(OVERRIDES)) {
    const v = query.get(param);
    if (v !== undefined) h[header] = v;
  }
  return h;
}

const MAX_METADATA_BYTES = 2048;

/**
 * Content-Type, stored headers and x-amz-meta-* from a PUT / CreateMultipartUpload / CopyObject(REPLACE).
 * With `signed` (the names the request's signature covers), a header outside it is ignored:
 * whoever holds a presigned URL cannot make the object carry a Cache-Control, Content-Encoding
 * or Content-Disposition the signer never allowed (they would be replayed on every GET).
 */
export function fieldsFromHeaders(headers: Headers, signed?: readonly string[]): Omit<ObjectFields, "tags"> {
  const stored: Record<string, string> = {};
  const allowed = (name: string) => signed === undefined || signed.includes(name);
  for (const name of STORED_HEADERS) {
    if (!allowed(name)) continue;
    let v = headers.get(name);
    // aws-chunked is transfer framing, not part of the object's representation.
    if (name === "content-encoding" && v !== null)
      v = v.split(",").map((s) => s.trim()).filter((s) => s !== "" && s.toLowerCase() !== "aws-chunked").join(",") || null;
    if (v !== null) stored[name] = v;
  }
  const metadata: Record<string, string> = {};
  let size = 0;
  headers.forEach((value, name) => {
    if (!name.startsWith("x-amz-meta-") || !allowed(name)) return;
    const k = name.slice("x-amz-meta-".length);
    metadata[k] = value;
    size += Buffer.byteLength(k) + Buffer.byteLength(value);
  });
  if (size > MAX_METADATA_BYTES)
    throw new S3Error("MetadataTooLarge", "Your metadata headers exceed the maximum allowed metadata size", 400, { MaxMessageLengthBytes: String(MAX_METADATA_BYTES) });
  return { contentType: (allowed("content-type") ? headers.get("content-type") : null) ?? "binary/octet-stream", headers: stored, metadata };
}

export type ByteRange = { start: number; end: number }; // inclusive end

/** undefined = serve the whole object (no or unusable Range header, as S3 does). */
export function parseRange(header: string | null, size: number): ByteRange | undefined {
  if (header === null) return undefined;
  const m = /^\s*bytes=(\d*)-(\d*)\s*$/.exec(header);
  if (!m || (m[1] === "" && m[2] === "")) return undefined;
  const unsatisfiable = () =>
    new S3Error("InvalidRange", "The requested range is not satisfiable", 416, { RangeRequested: header, ActualObjectSize: String(size) }, {
      "content-range": `bytes */${size}`,
    });
  if (m[1] === "") {
    const n = Number(m[2]);
    if (n === 0 || size === 0) throw unsatisfiable();
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Number(m[2]);
  if (m[2] !== "" && end < start) return undefined; // syntactically invalid: ignored, as RFC 9110 says
  if (start >= size) throw unsatisfiable();
  return { start, end: Math.min(end, size - 1) };
}

function etagMatches(list: string, etag: string): boolean {
  return list.split(",").some((t) => {
    const v = t.trim().replace(/^W\//, "").replace(/^"(.*)"$/, "$1");
    return v === "*" || v === etag;
  });
}

function parseHttpDate(v: string | null): number | undefined {
  if (v === null) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/**
 * RFC 7232 evaluation as S3 does it: If-Match beats If-Unmodified-Since, If-None-Match
 * beats If-Modified-Since. `prefix` selects x-amz-copy-source-if-* for CopyObject,
 * where every failure is a 412.
 */
export function checkConditions(meta: ObjectMeta, headers: Headers, prefix = ""): "not-modified" | undefined {
  const get = (n: string) => headers.get(prefix + n);
  const ifMatch = get("if-match");
  if (ifMatch !== null) {
    if (!etagMatches(ifMatch, meta.etag)) throw Errors.preconditionFailed(`${prefix}If-Match`);
  } else {
    const since = parseHttpDate(get("if-unmodified-since"));
    if (since !== undefined && meta.lastModified > since) throw Errors.preconditionFailed(`${prefix}If-Unmodified-Since`);
  }
  const ifNoneMatch = get("if-none-match");
  let notModified = false;
  if (ifNoneMatch !== null) notModified = etagMatches(ifNoneMatch, meta.etag);
  else {
    const since = parseHttpDate(get("if-modified-since"));
    notModified = since !== undefined && meta.lastModified <= since;
  }
  if (!notModified) return undefined;
  if (prefix) throw Errors.preconditionFailed(`${prefix}If-None-Match`);
  return "not-modified";
}

/** Body over [start, end) of an open file; the handle is closed when iteration ends, however it ends. */
export async function* fileBody(fh: FileHandle, start: number, end: number): AsyncGenerator<Uint8Array> {
  try {
    yield* readRange(fh, start, end);
  } finally {
    await fh.close().catch(() => {});
  }
}
