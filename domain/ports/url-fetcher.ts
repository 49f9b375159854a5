/**
 * Fetches a file a user named by URL (media_import). The adapter (worker/url-fetcher.ts, over
 * net/outbound.ts) decides which addresses may be reached, at connect time, on every redirect
 * hop; it keeps the file aside (a temporary file) until the caller has stored it.
 */
export type FetchFailureCode = "refused" | "timeout" | "too_large" | "status" | "redirects" | "network";

/** Why no file came: `code` for the import's error, the message for the person who asked. */
export interface FetchFailure extends Error {
  code: FetchFailureCode;
}

export const isFetchFailure = (err: unknown): err is FetchFailure => err instanceof Error && typeof (err as { code?: unknown }).code === "string" && (err as { name?: string }).name === "FetchFailure";

export interface FetchedFile {
  size: number;
  /** The final answer's Content-Type, without parameters; null when it sent none. */
  contentType: string | null;
  /** The bytes, as a Blob read from disk as it is sent. */
  blob(): Blob;
  /** Removes the kept file; call once done with it, success or not. */
  discard(): Promise<void>;
}

export interface FetchOptions {
  maxBytes: number;
  /** For the whole fetch, redirects and body included. */
  timeoutMs: number;
  /** Stop when fewer than `bytes` of the body arrived in the last `windowMs` (from the start); bytes 0: never. */
  minRate?: { bytes: number; windowMs: number };
  maxRedirects: number;
  /** Called once the final answer's headers are in; throwing stops the fetch with that error. */
  onHeaders(headers: { contentType: string | null; contentLength: number | null }): Promise<void>;
  /** Bytes received so far, now and then. */
  onProgress(bytes: number): void;
}

export interface UrlFetcher {
  fetch(url: string, opts: FetchOptions): Promise<FetchedFile>;
}
