import { afterEach, describe, expect, test } from "bun:test";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { createLogger } from "../../app/log.ts";
import type { Logger } from "../../domain/ports/log.ts";
import { errorResponse } from "../../http/respond.ts";
import { classifyError, toAppError } from "../../tools/failure.ts";

/**
 * A failed statement's error carries its parameters (Drizzle's message ends "params: ...",
 * postgres.js's error has `parameters`), and a database's message may quote one. No log line
 * prints them: not the failure log of a request, not any other line that passes `String(err)`.
 * And the sessions a database refuses (FATAL, whatever the code) are unavailability, not bugs.
 */
const KEY_HASH = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const EMAIL = "someone@example.test";
const SQL = 'select "id" from "api_keys" where "secret_hash" = $1 and "email" = $2';

/** As postgres.js reports a statement the server refused, wrapped by Drizzle as the service sees it. */
function failedStatement(code: string, severity: "ERROR" | "FATAL", message = "database \"media\" is not currently accepting connections") {
  const cause = Object.assign(new Error(message), { name: "PostgresError", code, severity, query: SQL, parameters: [KEY_HASH, EMAIL], args: [KEY_HASH, EMAIL] });
  return new DrizzleQueryError(SQL, [KEY_HASH, EMAIL], cause);
}

function recordingLogger() {
  const lines: string[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push(JSON.stringify({ level, msg, ...fields }));
  const log: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  return { log, text: () => lines.join("\n") };
}

const realWrite = process.stderr.write.bind(process.stderr);
function captureStderr(): () => string {
  const chunks: string[] = [];
  process.stderr.write = ((chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
    return true;
  }) as typeof process.stderr.write;
  return () => chunks.join("");
}
afterEach(() => {
  process.stderr.write = realWrite;
});

describe("no log line prints a statement's parameters", () => {
  test("the failure log of a request, unavailable or unexpected, names the statement and the cause", () => {
    for (const err of [failedStatement("55000", "FATAL"), failedStatement("42P01", "ERROR", 'relation "api_keys" does not exist')]) {
      const { log, text } = recordingLogger();
      toAppError(err, log, "r1");
      expect(text()).toContain("api_keys");
      expect(text()).not.toContain(KEY_HASH);
      expect(text()).not.toContain(EMAIL);
    }
  });

  test("a parameter the database's own message quotes is left out too", () => {
    const { log, text } = recordingLogger();
    toAppError(failedStatement("22P02", "ERROR", `invalid input syntax for type uuid: "${EMAIL}"`), log, "r2");
    expect(text()).toContain("invalid input syntax");
    expect(text()).not.toContain(EMAIL);
  });

  test("the logger itself drops them from any line, whatever the call site passed", () => {
    const read = captureStderr();
    const log = createLogger("debug");
    const err = failedStatement("57014", "ERROR", "canceling statement due to statement timeout");
    log.warn("egress rollup failed", { error: String(err) });
    log.error("crashed", { error: err.stack });
    log.warn("as an error", { error: err });
    log.info(`message ${String(err)}`);
    process.stderr.write = realWrite;
    const out = read();
    expect(out.split("\n").filter(Boolean)).toHaveLength(4);
    expect(out).toContain("Failed query");
    expect(out).not.toContain(KEY_HASH);
    expect(out).not.toContain(EMAIL);
  });
});

describe("a database refusing sessions answers 503 unavailable", () => {
  test("ALLOW_CONNECTIONS false (55000, FATAL), a database gone (3D000), credentials rotated (28P01, 28000)", () => {
    for (const code of ["55000", "3D000", "28P01", "28000"]) {
      const err = classifyError(failedStatement(code, "FATAL"));
      expect([code, err.status, err.code]).toEqual([code, 503, "unavailable"]);
    }
  });
  test("a statement's own 55000 (ERROR, not FATAL) stays an internal error", () => {
    expect(classifyError(failedStatement("55000", "ERROR", "lastval is not yet defined in this session")).status).toBe(500);
  });
  test("the answer says when to retry: 5 s", () => {
    const res = errorResponse(classifyError(failedStatement("57P03", "FATAL", "the database system is starting up")), "r3");
    expect([res.status, res.headers.get("retry-after")]).toEqual([503, "5"]);
  });
  test("a deadlock or a serialization failure asks for a retry after 1 s", () => {
    for (const code of ["40P01", "40001"]) {
      const res = errorResponse(classifyError(failedStatement(code, "ERROR", "deadlock detected")), "r4");
      expect([code, res.status, res.headers.get("retry-after")]).toEqual([code, 503, "1"]);
    }
  });
});
