import { describe, expect, test } from "bun:test";
import { AppError } from "../../domain/core/errors.ts";
import type { Logger } from "../../domain/ports/log.ts";
import { classifyError, toAppError } from "../../tools/failure.ts";

function recordingLogger() {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (msg: string) => void lines.push({ level, msg });
  const log: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  return { log, lines };
}

describe("how answered failures are logged", () => {
  test("not_configured is an operator's choice: logged at info, not error", () => {
    const { log, lines } = recordingLogger();
    const err = toAppError(new AppError("not_configured", "payments are off"), log, "r1");
    expect(err.status).toBe(501);
    expect(lines).toEqual([{ level: "info", msg: "payments are off" }]);
  });
  test("internal errors are still errors, and client errors are not logged", () => {
    const { log, lines } = recordingLogger();
    toAppError(new Error("boom"), log, "r2");
    toAppError(new AppError("not_found", "Bucket not found"), log, "r3");
    expect(lines.map((l) => l.level)).toEqual(["error"]);
  });
});

describe("database failures a retry can fix answer 503 unavailable", () => {
  // As the driver reports them through Drizzle: the SQLSTATE on the cause.
  const wrapped = (code: string) => Object.assign(new Error("Failed query: ..."), { cause: Object.assign(new Error("pg"), { code }) });
  test("a statement timeout, a deadlock, a serialization failure", () => {
    for (const code of ["57014", "40P01", "40001"]) {
      const err = classifyError(wrapped(code));
      expect([code, err.status, err.code]).toEqual([code, 503, "unavailable"]);
      expect(err.message).not.toMatch(/statement|deadlock|serializ/i);
    }
  });
  test("any other SQLSTATE stays an internal error", () => {
    expect(classifyError(wrapped("23505")).status).toBe(500);
  });
});
