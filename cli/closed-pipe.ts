/**
 * The reader of our standard output went away (`media download ID -o - | head -c 8`): what a
 * command still had to write has nobody to read it. Like other Unix tools, the command then
 * stops quietly; unlike a SIGPIPE death, it exits 0, since whatever was read was correct.
 */
export function isClosedPipe(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED";
}

/** Stops the process quietly on a closed stdout, wherever the write failed (a stream, a sink, an unawaited flush). */
export function exitQuietlyOnClosedPipe(): void {
  const quit = (err: unknown) => {
    if (!isClosedPipe(err)) throw err;
    process.exit(0);
  };
  process.stdout.on("error", quit);
  process.on("uncaughtException", quit);
  process.on("unhandledRejection", quit);
}
