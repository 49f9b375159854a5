/**
 * PGlite runs one statement or transaction at a time, on the server's own thread. Searches are
 * the longest statements one organization can send back to back (tens of milliseconds on
 * 100,000 objects, three at a time under ORG_MAX_SEARCHES), so they take a background lane:
 * whenever the connection frees, a waiting foreground call (any other statement or
 * transaction) goes first. Another organization's list, get or upload then waits for at most
 * the one search running, not for every search queued before it (bench/neighbours.ts).
 */
export class PgliteLanes {
  private busy = false;
  private readonly waiting = { fore: [] as (() => void)[], back: [] as (() => void)[] };

  async run<T>(lane: "fore" | "back", work: () => Promise<T>): Promise<T> {
    // The connection passes straight from one call to the next waiting one (see release).
    if (this.busy) await new Promise<void>((resolve) => this.waiting[lane].push(resolve));
    else this.busy = true;
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private release(): void {
    const next = this.waiting.fore.shift() ?? this.waiting.back.shift();
    if (next) next();
    else this.busy = false;
  }
}

type Fn = (...args: any[]) => any;

/** The client as seen from one lane: its top-level `query` and `transaction` wait their turn there; a transaction's own statements do not. */
export function inLane<C extends object>(client: C, lanes: PgliteLanes, lane: "fore" | "back"): C {
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "query" || prop === "transaction" || prop === "exec") return (...args: unknown[]) => lanes.run(lane, () => (value as Fn).apply(target, args));
      return value.bind(target);
    },
  });
}
