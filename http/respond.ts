import type { AppError } from "../domain/core/errors.ts";

export function json(status: number, body: unknown, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/json; charset=utf-8");
  return new Response(status === 204 ? null : JSON.stringify(body), { status, headers: h });
}

/** Every non-2xx answer carries this envelope (docs/conventions.md#errors). */
export function errorResponse(err: AppError, requestId: string, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  if (err.code === "rate_limited" && !h.has("retry-after")) h.set("retry-after", String(err.retryAfterSeconds ?? 60));
  return json(
    err.status,
    { error: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}), requestId } },
    h,
  );
}
