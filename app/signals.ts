/** SIGINT and SIGTERM run `stop` once (a second signal while it runs changes nothing), then the process exits. */
export function stopOnSignal(stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handle = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    await stop(signal);
    process.exit(0);
  };
  process.on("SIGINT", () => void handle("SIGINT"));
  process.on("SIGTERM", () => void handle("SIGTERM"));
}
