/**
 * Polls until `check` returns something other than undefined (or stops throwing), then returns it.
 * The default ceiling is for a loaded, shared machine (work that takes a second alone can take ten
 * times that under load 18), and sits below the run's per-test timeout (test/run.ts) so that a
 * wait that gives up says what it waited for instead of being cut off by bun's timeout.
 */
export const WAIT_CEILING_MS = 60_000;

export async function eventually<T>(check: () => Promise<T | undefined>, opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? WAIT_CEILING_MS);
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what ?? "a condition"}${last ? `: ${String(last)}` : ""}`);
    await Bun.sleep(opts.intervalMs ?? 50);
  }
}
