import type { Logger } from "../domain/ports/log.ts";

/**
 * Errors that only say the other end of a connection went away. The database, cache and storage
 * restart under a running service, and each client library fails or retries the work in hand.
 * Two full test runs of 2026-11-29 still lost the server or the worker at a PostgreSQL restart to
 * a `read ECONNRESET` that reached no handler, after every request had been answered. The path
 * found (postgres.js's read of the array types on a new connection) is patched where the driver
 * loads (db/postgres-fix.ts); these handlers are for the next such path in any library: the
 * reset has nothing left to fail, so it is logged with the stack that locates it, and the
 * process goes on.
 */
const PEER_GONE = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);

/** A connection-level error of a socket read or write, as the runtime reports a peer's reset. */
export function isPeerGone(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { code, syscall } = err as NodeJS.ErrnoException;
  return typeof code === "string" && PEER_GONE.has(code) && (syscall === "read" || syscall === "write");
}

/**
 * Installs the process-wide handlers of uncaught exceptions and unhandled rejections: a peer's
 * reset is logged as a warning, with the stack that says where it was left unhandled; anything
 * else is written out and ends the process with status 1, as it would with no handler at all.
 */
export function keepRunningThroughPeerResets(log: Pick<Logger, "warn">): void {
  const handle = (how: string) => (err: unknown) => {
    if (isPeerGone(err)) {
      const { code, syscall, stack } = err as NodeJS.ErrnoException;
      log.warn(`a connection reset reached no handler (${how}); the process goes on`, { error: `${code} (${syscall})`, stack: stack ?? "" });
      return;
    }
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  };
  process.on("uncaughtException", handle("an error event with no listener"));
  process.on("unhandledRejection", handle("a rejection nobody awaited"));
}
