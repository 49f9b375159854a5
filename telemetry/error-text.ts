/**
 * Errors as a log line may print them. A failed statement's error, as Drizzle reports it,
 * carries the statement's parameters in its message ("Failed query: ...\nparams: ...") and in
 * `params`; postgres.js's own errors carry them in `parameters`. Parameters are the request's
 * values, among them the SHA-256 of the caller's API key: no log line prints them.
 */

const NOT_LOGGED = "[parameters not logged]";

// Drizzle's message puts the parameters last, after "\nparams: "; a stack trace goes on with "\n    at ".
const PARAMS_SECTION = /(\nparams: )[\s\S]*?(?=\n\s+at |$)/g;

/** Shorter values (a limit of 50, `true`) say nothing about anyone and are too common to look for. */
const MIN_REDACTED_LENGTH = 6;

interface QueryFailure {
  query: string;
  params: unknown[];
  cause?: unknown;
}

function isQueryFailure(err: unknown): err is QueryFailure {
  const e = err as Partial<QueryFailure> | null;
  return typeof e === "object" && e !== null && typeof e.query === "string" && Array.isArray(e.params);
}

/** Every parameter value the error (or any error it wraps) knows of, as text. */
function parameterValues(err: unknown, out = new Set<string>(), depth = 0): Set<string> {
  if (typeof err !== "object" || err === null || depth > 5) return out;
  const e = err as { params?: unknown; parameters?: unknown; args?: unknown; cause?: unknown };
  for (const list of [e.params, e.parameters, e.args]) {
    if (!Array.isArray(list)) continue;
    for (const v of list) {
      if (v === null || v === undefined) continue;
      const text = typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v);
      if (text && text.length >= MIN_REDACTED_LENGTH) out.add(text);
    }
  }
  return parameterValues(e.cause, out, depth + 1);
}

/** The text without Drizzle's parameter section; safe to call on any string a log line holds. */
export function withoutParameters(text: string): string {
  return text.includes("\nparams: ") ? text.replace(PARAMS_SECTION, `$1${NOT_LOGGED}`) : text;
}

function describe(err: unknown, stack: boolean, depth: number): string {
  if (isQueryFailure(err)) {
    const cause = err.cause !== undefined && depth < 5 ? `\ncaused by: ${describe(err.cause, stack, depth + 1)}` : "";
    return `Failed query: ${err.query}${cause}`;
  }
  if (err instanceof Error) return stack && err.stack ? err.stack : `${err.name}: ${err.message}`;
  return String(err);
}

/**
 * An error for a log line: its message (or stack), a failed statement's SQL (with its
 * placeholders) and what the database said, without the parameters: neither Drizzle's
 * section nor any parameter value the database's message may quote.
 */
export function errorText(err: unknown, opts: { stack?: boolean } = {}): string {
  let text = withoutParameters(describe(err, opts.stack ?? false, 0));
  for (const value of parameterValues(err)) text = text.split(value).join(NOT_LOGGED);
  return text;
}
