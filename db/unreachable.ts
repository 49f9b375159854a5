/**
 * A dependency the start could not reach (PostgreSQL, the S3 store). Said as one line naming
 * what and the variable that points at it, rather than the driver's stack trace; the cause's
 * own words (a refused connection, a timeout, a refused password) are kept, never the URL,
 * which may hold credentials.
 */
export class Unreachable extends Error {
  override name = "Unreachable";
  constructor(what: string, variable: string, cause: unknown) {
    super(`Cannot start: ${what} is unreachable or refused the service (${reason(cause)}). Check ${variable}.`, { cause });
  }
}

function reason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const text = err.message || err.name;
  return typeof code === "string" && !text.includes(code) ? `${code}: ${text}` : text;
}
