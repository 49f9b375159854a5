import type { LogFields, Logger } from "../domain/ports/log.ts";
import { errorText, withoutParameters } from "../telemetry/error-text.ts";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;

/**
 * Whatever a call site passes (often `String(err)` of a failed statement), a statement's
 * parameters never reach the line (telemetry/error-text.ts).
 */
function safeFields(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) out[k] = typeof v === "string" ? withoutParameters(v) : v instanceof Error ? errorText(v) : v;
  return out;
}

/** One JSON object per line on stderr: easy to read, easy to ship. */
export function createLogger(level: keyof typeof LEVELS, base: LogFields = {}): Logger {
  const min = LEVELS[level];
  const write = (lvl: Exclude<keyof typeof LEVELS, "silent">, msg: string, fields?: LogFields) => {
    if (LEVELS[lvl] < min) return;
    process.stderr.write(`${JSON.stringify({ t: new Date().toISOString(), level: lvl, msg: withoutParameters(msg), ...base, ...(fields ? safeFields(fields) : {}) })}\n`);
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}
