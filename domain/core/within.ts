/**
 * What `work` resolves to, or `late` when it has not settled within `ms` or failed: for an
 * answer from storage that only improves on one the caller already has, and must never hold a
 * request longer than `ms`. The timer is cleared either way.
 */
export async function within<T, L>(work: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<L>((resolve) => (timer = setTimeout(() => resolve(late), ms)));
  return Promise.race([work.catch(() => late), expired]).finally(() => clearTimeout(timer));
}
