import type { LogFields, Logger } from "../domain/ports/log.ts";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;

/** One JSON object per line on stderr: easy to read, easy to ship. */
export function createLogger(level: keyof typeof LEVELS, base: LogFields = {}): Logger {
  const min = LEVELS[level];
  const write = (lvl: Exclude<keyof typeof LEVELS, "silent">, msg: string, fields?: LogFields) => {
    if (LEVELS[lvl] < min) return;
    process.stderr.write(`${JSON.stringify({ t: new Date().toISOString(), level: lvl, msg, ...base, ...fields })}\n`);
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}
