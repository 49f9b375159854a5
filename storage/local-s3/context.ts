// Request/response shapes shared by the operation handlers. They are plain data
// (not fetch Request/Response) so the HTTP layer can write bodies with an exact
// Content-Length and see the request target exactly as the client sent it.

import type { Uploads } from "./multipart.ts";
import type { AuthResult } from "./sigv4.ts";
import type { Store } from "./store.ts";

export interface S3Request {
  method: string;
  /** Path exactly as sent (still percent-encoded, dot segments untouched). */
  path: string;
  /** Query string without "?", exactly as sent. */
  rawQuery: string;
  headers: Headers;
  body: AsyncIterable<Uint8Array>;
  /** "http://host:port", for Location values. */
  origin: string;
}

export interface S3Response {
  status: number;
  headers: Record<string, string>;
  /** Iterables must be consumed (or returned) so they can release file handles. */
  body?: string | Uint8Array | AsyncIterable<Uint8Array>;
}

export interface Ctx {
  req: S3Request;
  method: string;
  /** "" for service-level requests. */
  bucket: string;
  /** "" for bucket-level requests. */
  key: string;
  /** Decoded query parameters (first occurrence wins). */
  query: Map<string, string>;
  auth: AuthResult;
  store: Store;
  uploads: Uploads;
  region: string;
}

/** S3's maximum object size for a single PUT (and for one part). */
export const MAX_PUT_SIZE = 5 * 1024 ** 3;
/**
 * This node's extension to S3: a query parameter bounding the body of a PUT (object or part),
 * in bytes. Every query parameter is part of the SigV4 canonical request, so a presigned URL
 * that carries it cannot be stripped or raised without breaking the signature; a body above it
 * is refused (400 EntityTooLarge) and nothing is stored. S3 and other stores ignore it.
 */
export const MAX_LENGTH_PARAM = "max-content-length";
/** Cap for XML request bodies (a 1000-key DeleteObjects is well under this). */
export const MAX_XML_BODY = 4 * 1024 * 1024;
