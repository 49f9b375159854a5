import type { BunFile } from "bun";
import { ApiError, backoff } from "./client.ts";

/** At most `n` tasks at once; the rest wait their turn in order. */
export class Limiter {
  private active = 0;
  private readonly queue: (() => void)[] = [];
  constructor(private readonly n: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.n) await new Promise<void>((ok) => this.queue.push(ok));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }
}

/** Storage refused a PUT or GET of bytes (an S3 XML error, or a dropped connection). */
export class StorageError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "StorageError";
  }
}

/**
 * Worth another attempt: lost connections, storage 5xx/408/429, and 403 because a URL
 * signed for a slow retry may have expired (each attempt signs a fresh one). API errors
 * were already retried by the client; only its network failures are tried again here.
 */
export function retryable(err: unknown): boolean {
  if (err instanceof StorageError) return err.status === 0 || err.status >= 500 || err.status === 408 || err.status === 429 || err.status === 403;
  if (err instanceof ApiError) return err.status === 0 || err.status >= 500 || err.status === 429;
  return err instanceof TypeError || (err as { code?: string })?.code === "ECONNRESET";
}

export async function withRetries<T>(
  attempts: number,
  task: (attempt: number) => Promise<T>,
  onRetry: (err: unknown, attempt: number, waitMs: number) => void,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await task(attempt);
    } catch (err) {
      if (attempt >= attempts || !retryable(err)) throw err;
      const wait = backoff(attempt);
      onRetry(err, attempt, wait);
      await Bun.sleep(wait);
    }
  }
}

/**
 * The body of one PUT: a lazy slice of the file, sent by Bun straight from disk. With
 * `onBytes` the slice is streamed through a counter instead so a progress bar can move
 * during the request; that costs some throughput, so it is only done when a bar is shown.
 */
export function fileBody(file: BunFile, start: number, end: number, onBytes?: (n: number) => void): BodyInit {
  const slice = file.slice(start, end);
  if (!onBytes) return slice;
  const reader = slice.stream().getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      onBytes(value.byteLength);
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** PUT bytes to a presigned URL with its signed headers; returns the response's ETag. */
export async function putBytes(url: string, headers: Record<string, string>, body: BodyInit, length: number): Promise<string | null> {
  let response: Response;
  try {
    // A streamed body (the progress bar's) would otherwise go chunked, which S3 refuses on a PUT.
    const sent = new Headers(headers);
    sent.set("content-length", String(length));
    response = await fetch(url, { method: "PUT", headers: sent, body });
  } catch (err) {
    throw new StorageError(0, "network_error", `storage unreachable: ${(err as Error).message}`);
  }
  if (!response.ok) throw await storageError(response);
  await response.arrayBuffer().catch(() => {});
  return response.headers.get("etag");
}

/** GET a presigned download URL; the answer, with its body still to read. Refusals and an unreachable store are StorageErrors. */
export async function getBytes(url: string): Promise<Response & { body: ReadableStream<Uint8Array> }> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new StorageError(0, "network_error", `storage unreachable: ${(err as Error).message}`);
  }
  if (!response.ok || !response.body) throw await storageError(response);
  return response as Response & { body: ReadableStream<Uint8Array> };
}

export async function storageError(response: Response): Promise<StorageError> {
  const text = await response.text().catch(() => "");
  const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? `HTTP${response.status}`;
  const message = /<Message>([^<]+)<\/Message>/.exec(text)?.[1] ?? response.statusText;
  return new StorageError(response.status, code, `storage answered ${response.status} ${code}${message ? `: ${message}` : ""}`);
}
