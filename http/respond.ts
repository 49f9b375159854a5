import type { AppError } from "../domain/core/errors.ts";

export function json(status: number, body: unknown, headers?: HeadersInit): Response {
  return jsonText(status, JSON.stringify(body), headers);
}

/** A JSON answer whose text is written already. */
export function jsonText(status: number, text: string, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/json; charset=utf-8");
  return new Response(status === 204 ? null : text, { status, headers: h });
}

/**
 * A backing service down: most outages the service sees (a restart, a failover, a database
 * refusing sessions) are over in seconds, and clients that honour Retry-After come back then
 * rather than at once, all together.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Every non-2xx answer carries this envelope (docs/conventions.md#errors). */
export function errorResponse(err: AppError, requestId: string, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  if (err.code === "rate_limited" && !h.has("retry-after")) h.set("retry-after", String(err.retryAfterSeconds ?? 60));
  if (err.code === "unavailable" && !h.has("retry-after")) h.set("retry-after", String(err.retryAfterSeconds ?? UNAVAILABLE_RETRY_AFTER_SECONDS));
  return json(
    err.status,
    { error: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}), requestId } },
    h,
  );
}
