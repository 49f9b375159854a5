import type { TestServer } from "../support/server.ts";

/**
 * The promise audit: every statement in README.md, SECURITY.md and docs/ that names a status
 * code, a limit, a header or a number is a promise to a reader, so each is either backed by a
 * test or is not a promise (a measurement, an example value) and says why.
 *
 * One file per page under test/claims/ (`security.ts` for SECURITY.md, `docs-guards.ts` for
 * docs/guards.md ...), each default-exporting a PageClaims. test/e2e/doc-claims.test.ts checks
 * that every quoted text is still in its page, that every test named as backing exists, runs
 * the checks written here against a real server, and that no line of a page that looks like a
 * promise (PROMISE below) is left out.
 */
export interface Claim {
  /** Text of the page (whitespace and Markdown emphasis ignored) that makes the promise. */
  says: string;
  /** A test elsewhere that checks it: its file, and a substring of its name (describe > test). */
  by?: { file: string; test: string };
  /** Or a check run here against a live service (embedded backends; `server` is shared). */
  check?: (server: TestServer) => Promise<void>;
  /** A long check on a server of its own: it runs beside the others instead of after them. */
  beside?: boolean;
}

export interface NotAPromise {
  /** Text of the page. */
  says: string;
  /** Why no test backs it: a measurement (and where it was measured), an example value, a pointer to another page. */
  why: string;
}

export interface PageClaims {
  /** The page, relative to the repository. */
  page: string;
  claims: Claim[];
  notPromises?: NotAPromise[];
}

/**
 * A line that names a status code, a limit, a header or a number with a unit looks like a
 * promise. Code blocks are not read (the examples test runs them).
 */
export const PROMISE: RegExp[] = [
  /\b[1-5]\d\d\b(?![\d.,%])/, // a status code (or any three-digit number: the page says which)
  /\b(?:at most|at least|up to|no more than|maximum|minimum|max|min|limit|limits|default|defaults to)\b[^.]*\d/i,
  /\b\d[\d,._]*\s?(?:ms|s|seconds?|minutes?|min|hours?|h|days?|weeks?|bytes?|B|KB|MB|GB|KiB|MiB|GiB|TB|%|per (?:minute|second|hour|day))\b/,
  /`[A-Za-z]+(?:-[A-Za-z]+)+`|\b(?:X|x)-[A-Za-z-]+\b|\bRetry-After\b|\bWWW-Authenticate\b|\bContent-[A-Z][a-z]+\b/, // a header
];

/** Normalises page text and quotes alike: collapsed whitespace, no Markdown emphasis or code ticks. */
export function normalise(text: string): string {
  return text.replace(/[`*_]/g, "").replace(/\s+/g, " ").trim();
}
