import { AppError } from "../domain/core/errors.ts";
import type { Logger } from "../domain/ports/log.ts";
import { errorText } from "../telemetry/error-text.ts";

// Connection-level failures of PostgreSQL, Redis or storage: the client should retry.
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  // Bun's fetch (the storage client's GET and PUT)
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  // A database that refuses new sessions: dropped or renamed, credentials rotated.
  "3D000", // invalid_catalog_name
  "28000", // invalid_authorization_specification
  "28P01", // invalid_password
]);

/**
 * PostgreSQL ends a session (or refuses to start one) with a FATAL error, whatever its code:
 * ALLOW_CONNECTIONS false answers 55000, which in a statement would be a bug of ours. Each
 * request then fails on a connection it could not get, and a retry gets another.
 */
function isSessionFailure(err: unknown): boolean {
  const e = err as { severity?: unknown; cause?: { severity?: unknown } } | null;
  const severity = e?.severity ?? e?.cause?.severity;
  return severity === "FATAL" || severity === "PANIC";
}

/**
 * A dependency that did not answer in time (the storage client's deadlines, S3_TIMEOUT_MS), or
 * storage answering 5xx after its retries (an S3 error carries the status in $metadata).
 */
function isDependencyFailure(err: unknown): boolean {
  const e = err as { name?: unknown; $metadata?: { httpStatusCode?: unknown } } | null;
  if (e?.name === "TimeoutError") return true;
  const status = e?.$metadata?.httpStatusCode;
  return typeof status === "number" && status >= 500;
}

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === "string" ? code : undefined;
}

/** The HTTP status `toAppError` will give this error, without logging it (metrics, traces). */
export function failureStatus(err: unknown): number {
  return classifyError(err).status;
}

/**
 * Anything thrown becomes an AppError before it reaches a client: internal messages,
 * SQL and stack traces are logged, never sent: errors are mapped once, here at the surface.
 * A statement's parameters are in neither (telemetry/error-text.ts).
 */
export function toAppError(err: unknown, log: Logger, requestId: string): AppError {
  const mapped = classifyError(err);
  if (err instanceof AppError) {
    // A feature left unconfigured is the operator's choice, answered as designed: not an error of ours.
    if (err.code === "not_configured") log.info(err.message, { requestId, code: err.code });
    else if (err.status >= 500) log.error(err.message, { requestId, code: err.code, details: err.details });
  } else if (mapped.code === "unavailable") {
    log.warn("backing service unavailable", { requestId, code: errorCode(err), error: errorText(err) });
  } else {
    // The driver's code (a PostgreSQL SQLSTATE) names the cause when the message does not.
    log.error("unexpected error", { requestId, code: errorCode(err), error: errorText(err, { stack: true }) });
  }
  return mapped;
}

/** The AppError a client gets for `err`, without logging anything (the audit log records its status). */
export function classifyError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const code = errorCode(err);
  // query_canceled: the statement ran past its statement_timeout (DB_STATEMENT_TIMEOUT_MS,
  // SEARCH_STATEMENT_TIMEOUT_MS). The database is busy, not broken: a retry, or a narrower
  // request, can succeed.
  if (code === "57014") return new AppError("unavailable", "The database took too long to answer; retry shortly, or narrow the request");
  // deadlock_detected, serialization_failure: two transactions collided under load; PostgreSQL
  // rolled one back, and the same request retried succeeds.
  if (code === "40P01" || code === "40001") return Object.assign(new AppError("unavailable", "The request collided with another one; retry it"), { retryAfterSeconds: 1 });
  if ((code && (UNAVAILABLE_CODES.has(code) || code.startsWith("08"))) || isSessionFailure(err) || isDependencyFailure(err)) {
    return new AppError("unavailable", "A backing service is temporarily unavailable; retry shortly");
  }
  return new AppError("internal_error", "Internal error");
}

/**
 * An error as an agent reads it first (the line an MCP tool error leads with, and its
 * message): a validation error names the field, what was wrong and what to send instead (the
 * field's own description), not "Invalid input"; a rate limit says how many seconds to wait,
 * since an agent never sees the Retry-After header. REST keeps the envelope's message; its
 * details say the same.
 */
export function agentMessage(err: AppError, fieldHint?: (path: string) => string | undefined): string {
  if (err.code === "validation_error" && Array.isArray(err.details) && err.details.length > 0) {
    const [first, ...rest] = err.details as { path?: string; message?: string }[];
    const path = first?.path || "input";
    const hint = fieldHint?.(path);
    // Not in parentheses: a hint ending in a word, then "(", reads like a stack frame ("at confirm (")
    // to anything that screens answers for leaked internals.
    const more = rest.length > 0 ? `; ${rest.length} more in details` : "";
    return `${path}: ${first?.message ?? err.message}${hint ? `; send ${hint}` : ""}${more}`;
  }
  if (err.code === "rate_limited" && err.retryAfterSeconds !== undefined) {
    const wait = `retry in ${err.retryAfterSeconds} s`;
    const text = err.message.replace(/retry after the number of seconds in Retry-After/i, wait);
    return text === err.message && !text.includes(wait) ? `${text}; ${wait}` : text;
  }
  return err.message;
}
