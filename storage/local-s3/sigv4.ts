// AWS Signature Version 4 verification for S3: Authorization-header auth and
// presigned (query-string) auth. The server re-derives the canonical request from
// what actually arrived, so any signed header or query value a client changes
// breaks the signature.

import { createHmac, timingSafeEqual } from "node:crypto";
import { ALGORITHM, amzDate, canonicalQuery, signingKey as deriveSigningKey, sha256Hex, UNSIGNED_PAYLOAD, uriEncode } from "../sigv4.ts";
import { Errors, S3Error } from "./errors.ts";

export { ALGORITHM, UNSIGNED_PAYLOAD, sha256Hex, uriEncode };
export const STREAMING_SIGNED = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
export const STREAMING_SIGNED_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER";
export const STREAMING_UNSIGNED_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER";
export const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const MAX_PRESIGN_SECONDS = 604800;

export interface SignedRequest {
  method: string;
  /** Path as received (Bun has already resolved dot segments; it does not decode). */
  path: string;
  /** Query string without the leading "?", as received. */
  rawQuery: string;
  headers: Headers;
}

export interface AuthOptions {
  region: string;
  /** accessKeyId -> secretAccessKey */
  secrets: Map<string, string>;
  maxClockSkewSeconds: number;
}

/** What a verified request carries forward to body handling (chunk signatures chain off it). */
export interface AuthResult {
  accessKeyId: string;
  presigned: boolean;
  /** Declared payload hash: hex SHA-256, UNSIGNED-PAYLOAD or a STREAMING-* mode. */
  payloadHash: string;
  longDate: string;
  scope: string;
  signingKey: Buffer;
  seedSignature: string;
  /** Lowercase names of the headers the signature covers. */
  signedHeaders: string[];
}

export function decodeComponent(s: string, plusIsSpace: boolean): string {
  try {
    return decodeURIComponent(plusIsSpace ? s.replace(/\+/g, " ") : s);
  } catch {
    throw new S3Error("InvalidURI", "Couldn't parse the specified URI.", 400);
  }
}

/** Decoded query pairs in received order; S3 treats "+" in a query as a space. */
export function parseQuery(rawQuery: string): [string, string][] {
  const out: [string, string][] = [];
  for (const part of rawQuery.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const k = eq < 0 ? part : part.slice(0, eq);
    const v = eq < 0 ? "" : part.slice(eq + 1);
    out.push([decodeComponent(k, true), decodeComponent(v, true)]);
  }
  return out;
}

function queryToSign(pairs: [string, string][], dropSignature: boolean): string {
  return canonicalQuery(dropSignature ? pairs.filter(([k]) => k !== "X-Amz-Signature") : pairs);
}

/**
 * S3 signs the URI-encoded path without normalisation. Well-behaved clients send
 * exactly that, so decoding each segment and re-encoding it reproduces what they
 * signed; the path as received is tried too, for clients that encode more
 * (or fewer) characters than UriEncode does.
 */
function canonicalUris(path: string): string[] {
  let reencoded: string | undefined;
  try {
    reencoded = path
      .split("/")
      .map((seg) => uriEncode(decodeURIComponent(seg), false))
      .join("/");
  } catch {
    reencoded = undefined;
  }
  return reencoded === undefined || reencoded === path ? [path] : [reencoded, path];
}

function canonicalHeaderValue(v: string | null): string {
  return (v ?? "").trim().replace(/\s+/g, " ");
}

const signingKeyCache = new Map<string, Buffer>();
export function signingKey(secret: string, shortDate: string, region: string): Buffer {
  const id = `${secret}\u0000${shortDate}\u0000${region}`;
  let key = signingKeyCache.get(id);
  if (!key) {
    if (signingKeyCache.size > 256) signingKeyCache.clear();
    key = deriveSigningKey(secret, shortDate, region, "s3");
    signingKeyCache.set(id, key);
  }
  return key;
}

export function signString(key: Buffer, stringToSign: string): string {
  return createHmac("sha256", key).update(stringToSign).digest("hex");
}

/** Constant-time comparison of two hex signatures. */
export function signaturesEqual(expected: string, provided: string): boolean {
  const a = Buffer.from(expected, "latin1");
  const b = Buffer.from(provided, "latin1");
  return a.length === b.length && timingSafeEqual(a, b);
}

export function chunkSignature(auth: AuthResult, previous: string, chunkSha256: string): string {
  return signString(
    auth.signingKey,
    ["AWS4-HMAC-SHA256-PAYLOAD", auth.longDate, auth.scope, previous, EMPTY_SHA256, chunkSha256].join("\n"),
  );
}

export function trailerSignature(auth: AuthResult, previous: string, trailerSha256: string): string {
  return signString(auth.signingKey, ["AWS4-HMAC-SHA256-TRAILER", auth.longDate, auth.scope, previous, trailerSha256].join("\n"));
}

function parseLongDate(s: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) return undefined;
  const t = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return Number.isNaN(t) ? undefined : t;
}

function toLongDate(ms: number): string {
  return amzDate(new Date(ms));
}

const VALID_PAYLOAD = new Set([UNSIGNED_PAYLOAD, STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER]);

interface Parsed {
  accessKeyId: string;
  credentialScope: string[]; // [date, region, service, terminator]
  signedHeaders: string[];
  signature: string;
  longDate: string;
  payloadHash: string;
}

/** Authenticate a request; returns undefined for an anonymous one. Throws S3Error on failure. */
export function authenticate(req: SignedRequest, opts: AuthOptions, now = Date.now()): AuthResult | undefined {
  const authz = req.headers.get("authorization");
  const query = parseQuery(req.rawQuery);
  const q = (name: string) => query.find(([k]) => k === name)?.[1];
  const presigned = q("X-Amz-Signature") !== undefined || q("X-Amz-Algorithm") !== undefined || q("X-Amz-Credential") !== undefined;
  if (authz !== null && presigned) throw Errors.invalidArgument("Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified", "Authorization", authz);
  if (authz === null && !presigned) return undefined;

  const malformed = (msg: string) =>
    presigned ? new S3Error("AuthorizationQueryParametersError", msg, 400) : new S3Error("AuthorizationHeaderMalformed", `The authorization header is malformed; ${msg}`, 400);

  let p: Parsed;
  if (!presigned) {
    if (/^AWS\s/.test(authz!)) throw Errors.invalidRequest("The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.");
    const m = /^AWS4-HMAC-SHA256\s+(.*)$/s.exec(authz!);
    if (!m) throw malformed("the authorization header requires the AWS4-HMAC-SHA256 algorithm.");
    const fields = new Map<string, string>();
    for (const part of m[1]!.split(/\s*,\s*/)) {
      const eq = part.indexOf("=");
      if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
    }
    const cred = fields.get("Credential");
    const sh = fields.get("SignedHeaders");
    const sig = fields.get("Signature");
    if (!cred || !sh || !sig) throw malformed("the authorization header requires Credential, SignedHeaders and Signature.");
    let longDate = req.headers.get("x-amz-date");
    if (longDate === null) {
      const d = req.headers.get("date");
      const t = d === null ? NaN : Date.parse(d);
      if (Number.isNaN(t)) throw Errors.accessDenied("AWS authentication requires a valid Date or x-amz-date header");
      longDate = toLongDate(t);
    }
    const payloadHash = req.headers.get("x-amz-content-sha256");
    if (payloadHash === null) throw Errors.invalidRequest("Missing required header for this request: x-amz-content-sha256");
    const [accessKeyId = "", ...scope] = cred.split("/");
    p = { accessKeyId, credentialScope: scope, signedHeaders: sh.split(";"), signature: sig, longDate, payloadHash };
  } else {
    const alg = q("X-Amz-Algorithm");
    const cred = q("X-Amz-Credential");
    const date = q("X-Amz-Date");
    const expires = q("X-Amz-Expires");
    const sh = q("X-Amz-SignedHeaders");
    const sig = q("X-Amz-Signature");
    if (alg === undefined || cred === undefined || date === undefined || expires === undefined || sh === undefined || sig === undefined)
      throw malformed("Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.");
    if (alg !== ALGORITHM) throw malformed('X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"');
    if (!/^\d+$/.test(expires)) throw malformed("X-Amz-Expires should be a number");
    if (+expires > MAX_PRESIGN_SECONDS) throw malformed("X-Amz-Expires must be less than a week (in seconds) that is 604800");
    const t = parseLongDate(date);
    if (t === undefined) throw malformed("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"");
    if (now > t + +expires * 1000)
      throw Errors.accessDenied("Request has expired", {
        "X-Amz-Expires": expires,
        Expires: new Date(t + +expires * 1000).toISOString(),
        ServerTime: new Date(now).toISOString(),
      });
    if (t > now + opts.maxClockSkewSeconds * 1000) throw Errors.accessDenied("Request is not valid yet");
    const declared = query.find(([k]) => k.toLowerCase() === "x-amz-content-sha256")?.[1] ?? req.headers.get("x-amz-content-sha256");
    const [accessKeyId = "", ...scope] = cred.split("/");
    p = { accessKeyId, credentialScope: scope, signedHeaders: sh.split(";"), signature: sig, longDate: date, payloadHash: declared ?? UNSIGNED_PAYLOAD };
  }

  const secret = opts.secrets.get(p.accessKeyId);
  if (secret === undefined)
    throw new S3Error("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.", 403, { AWSAccessKeyId: p.accessKeyId });
  const [shortDate, region, service, terminator] = p.credentialScope;
  if (p.credentialScope.length !== 4 || !shortDate || !region || service !== "s3" || terminator !== "aws4_request")
    throw malformed(`incorrect credential scope; expecting "<YYYYMMDD>/${opts.region}/s3/aws4_request".`);
  if (region !== opts.region) {
    const e = malformed(`the region '${region}' is wrong; expecting '${opts.region}'`);
    throw new S3Error(e.code, e.message, 400, { Region: opts.region });
  }
  const t = parseLongDate(p.longDate);
  if (t === undefined) throw malformed("X-Amz-Date must be in the ISO8601 Long Format.");
  if (shortDate !== p.longDate.slice(0, 8)) throw malformed("Invalid credential date. Date is not the same as X-Amz-Date.");
  if (!presigned && Math.abs(now - t) > opts.maxClockSkewSeconds * 1000)
    throw new S3Error("RequestTimeTooSkewed", "The difference between the request time and the current time is too large.", 403, {
      RequestTime: p.longDate,
      ServerTime: new Date(now).toISOString(),
      MaxAllowedSkewMilliseconds: String(opts.maxClockSkewSeconds * 1000),
    });
  if (!/^[0-9a-f]{64}$/.test(p.payloadHash) && !VALID_PAYLOAD.has(p.payloadHash))
    throw Errors.invalidArgument("x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER or a valid sha256 value.", "x-amz-content-sha256", p.payloadHash);
  if (presigned && p.payloadHash.startsWith("STREAMING-")) throw Errors.invalidRequest("Streaming payloads are not supported with presigned URLs");

  const signed = p.signedHeaders;
  if (!signed.includes("host")) throw malformed("the host header must be signed.");
  if (signed.some((h) => h === "" || h !== h.toLowerCase())) throw malformed("SignedHeaders must be lowercase header names.");
  // S3 refuses x-amz-* headers that ride along unsigned, so they cannot be injected.
  const unsigned: string[] = [];
  req.headers.forEach((_v, name) => {
    if (name.startsWith("x-amz-") && !signed.includes(name)) unsigned.push(name);
  });
  if (unsigned.length > 0)
    throw Errors.accessDenied("There were headers present in the request which were not signed", { HeadersNotSigned: unsigned.join(", ") });

  // A presigned URL binds headers (Content-Length, a write condition, the content type): name
  // them when one is missing, so the client learns what to send instead of a bare mismatch.
  const missing = signed.filter((h) => req.headers.get(h) === null);
  if (missing.length > 0)
    throw new S3Error(
      "SignatureDoesNotMatch",
      `The request lacks headers the URL was signed with: ${missing.join(", ")}. Send every header the presign result listed, unchanged (signed: ${signed.join(", ")})`,
      403,
      { AWSAccessKeyId: p.accessKeyId, HeadersNotPresent: missing.join(", "), SignedHeaders: signed.join(";") },
    );

  const headerBlock = signed.map((h) => `${h}:${canonicalHeaderValue(req.headers.get(h))}\n`).join("");
  const queryPart = queryToSign(query, presigned);
  const scope = `${shortDate}/${region}/s3/aws4_request`;
  const key = signingKey(secret, shortDate, region);
  let first: { canonicalRequest: string; stringToSign: string } | undefined;
  for (const uri of canonicalUris(req.path)) {
    const canonicalRequest = [req.method, uri, queryPart, headerBlock, signed.join(";"), p.payloadHash].join("\n");
    const stringToSign = [ALGORITHM, p.longDate, scope, sha256Hex(canonicalRequest)].join("\n");
    if (signaturesEqual(signString(key, stringToSign), p.signature))
      return { accessKeyId: p.accessKeyId, presigned, payloadHash: p.payloadHash, longDate: p.longDate, scope, signingKey: key, seedSignature: p.signature, signedHeaders: signed };
    first ??= { canonicalRequest, stringToSign };
  }
  throw new S3Error(
    "SignatureDoesNotMatch",
    "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
    403,
    { AWSAccessKeyId: p.accessKeyId, StringToSign: first!.stringToSign, SignatureProvided: p.signature, CanonicalRequest: first!.canonicalRequest, SignedHeaders: signed.join(";") },
  );
}
