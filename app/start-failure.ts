import { DataDirLocked } from "../storage/local-s3/dir-lock.ts";
import { Unreachable } from "../db/unreachable.ts";
import { ListenError } from "./listen.ts";

export { Unreachable };

/** A failure the operator fixes by changing the environment: ports, the data directory, unreachable dependencies. */
export function isStartFailure(err: unknown): err is Error {
  return err instanceof ListenError || err instanceof DataDirLocked || err instanceof Unreachable;
}

/** Ends a start that failed for such a reason with one line on stderr and status 1; any other error is left to the caller. */
export function exitIfStartFailure(err: unknown, more = ""): void {
  if (!isStartFailure(err)) return;
  process.stderr.write(`${err.message}${more ? ` ${more}` : ""}\n`);
  process.exit(1);
}
