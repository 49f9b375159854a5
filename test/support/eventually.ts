/** Polls until `check` returns something other than undefined (or stops throwing), then returns it. */
export async function eventually<T>(check: () => Promise<T | undefined>, opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
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
