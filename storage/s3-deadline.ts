/**
 * One storage operation within S3_TIMEOUT_MS in all, its attempts included. With a deadline
 * per attempt and the SDK's three attempts, a store that accepts connections and never
 * answers held a confirm 39 s; now it fails the operation once the time is spent, and only a
 * quick failure (a refused connection, a reset, a 5xx, throttling) is tried again, while
 * time is left.
 */

export const ATTEMPTS = 3;

/** Connection-level failures worth another attempt (Node's and Bun's names for them). */
const TRANSIENT_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "ConnectionRefused", "ConnectionClosed", "FailedToOpenSocket"]);

export function timeoutError(ms: number): Error {
  // Named as the SDK's and fetch's own deadlines are: answered 503 unavailable (tools/failure.ts).
  return Object.assign(new Error(`storage did not answer within ${ms} ms (S3_TIMEOUT_MS, all attempts)`), { name: "TimeoutError" });
}

function retryable(err: unknown): boolean {
  const e = err as { name?: unknown; code?: unknown; cause?: { code?: unknown }; $metadata?: { httpStatusCode?: unknown }; $retryable?: unknown } | null;
  const status = e?.$metadata?.httpStatusCode;
  if (typeof status === "number") return status >= 500 || status === 429;
  if (e?.$retryable) return true;
  const code = e?.code ?? e?.cause?.code;
  return (typeof code === "string" && TRANSIENT_CODES.has(code)) || e?.name === "TimeoutError";
}

/**
 * Runs `attempt` until it succeeds, fails for good, or `timeoutMs` has passed since the first
 * one began; each attempt gets the operation's abort signal. A retry whose back-off would end
 * past the deadline is not made. `total: false` (an operation the store may legitimately work
 * on for minutes, as S3 does on completing a large multipart upload, sending spaces meanwhile):
 * no deadline in all, each attempt bounded by the client's idle timeout, and an attempt that
 * timed out is not made again.
 */
export async function withinDeadline<T>(timeoutMs: number, attempt: (signal: AbortSignal) => Promise<T>, opts: { total?: boolean } = {}): Promise<T> {
  const total = opts.total ?? true;
  const controller = new AbortController();
  const deadline = total ? performance.now() + timeoutMs : Number.POSITIVE_INFINITY;
  const timer = total ? setTimeout(() => controller.abort(timeoutError(timeoutMs)), timeoutMs) : undefined;
  try {
    for (let n = 1; ; n++) {
      try {
        return await attempt(controller.signal);
      } catch (err) {
        if (controller.signal.aborted) throw timeoutError(timeoutMs);
        const backoff = 100 * 2 ** n;
        const timedOut = (err as { name?: unknown } | null)?.name === "TimeoutError";
        if (n >= ATTEMPTS || !retryable(err) || (!total && timedOut) || performance.now() + backoff >= deadline) throw err;
        await Bun.sleep(backoff);
      }
    }
  } finally {
    clearTimeout(timer);
  }
}
