/**
 * The one application error. Domain code throws it; each surface (REST, MCP, CLI)
 * translates it once. The catalogue below is the complete list of codes a tool may
 * declare, so OpenAPI can document them and tests can check them.
 */
export const errorCatalogue = {
  validation_error: { status: 400, description: "Input failed validation; details lists { path, message }." },
  bad_request: { status: 400, description: "The request cannot be processed as sent." },
  unauthorized: { status: 401, description: "Missing, malformed, unknown, expired or rotated-out credential." },
  forbidden: { status: 403, description: "Scope missing, or outside the key's bucket." },
  quota_exceeded: { status: 403, description: "An upload reservation would exceed allocated storage." },
  not_found: { status: 404, description: "No such resource in the caller's organization." },
  thumbnail_pending: { status: 404, description: "The derivative is still being generated." },
  thumbnail_unavailable: { status: 404, description: "No derivative exists for this object." },
  method_not_allowed: { status: 405, description: "The path exists, but not for this method; Allow lists the methods it takes." },
  conflict: { status: 409, description: "The request conflicts with the current state." },
  idempotency_in_flight: { status: 409, description: "A request with this Idempotency-Key is still running." },
  payload_too_large: { status: 413, description: "The request body is larger than allowed." },
  request_header_fields_too_large: { status: 431, description: "The request line and headers together are larger than allowed (16 KiB)." },
  rate_limited: { status: 429, description: "Request rate limit exceeded; see Retry-After." },
  internal_error: { status: 500, description: "Unexpected server error." },
  not_configured: { status: 501, description: "The feature's provider is not configured." },
  unavailable: { status: 503, description: "A backing service is temporarily unavailable; retry later." },
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  /** For `rate_limited` and `unavailable`: the Retry-After to send when no guard set one (default 60 and 5). */
  retryAfterSeconds?: number;

  constructor(code: ErrorCode, message: string, details?: unknown) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.status = errorCatalogue[code].status;
    this.details = details;
  }
}

export const errors = {
  validation: (details: ErrorDetail[], message = "Invalid input") => new AppError("validation_error", message, details),
  badRequest: (message: string, details?: unknown) => new AppError("bad_request", message, details),
  unauthorized: (message = "Missing or invalid credential") => new AppError("unauthorized", message),
  forbidden: (message: string) => new AppError("forbidden", message),
  notFound: (what: string) => new AppError("not_found", `${what} not found`),
  conflict: (message: string, details?: unknown) => new AppError("conflict", message, details),
  notConfigured: (message: string) => new AppError("not_configured", message),
  unavailable: (message: string) => new AppError("unavailable", message),
};

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
