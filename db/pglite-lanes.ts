import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The organization on whose behalf the statements of this piece of work run: a tool call
 * (tools/invoke.ts) or a job (app/observe.ts) sets it. Unset: work of the service itself
 * (start-up, sweepers, the outbox), which queues as one more party.
 */
export const onBehalfOf = new AsyncLocalStorage<string>();

/**
 * PGlite runs one statement or transaction at a time, on the server's own thread, so one
 * organization's stream of statements could hold everyone else's behind it. Waiting calls
 * are therefore taken in turns:
 * - by organization: whenever the connection frees, the next call comes from the next
 *   organization that has one waiting (round robin), so another organization's list, get or
 *   upload waits for about one statement per organization waiting, not for every statement
 *   one busy organization has queued;
 * - searches last: they are the longest statements an organization can send back to back
 *   (tens of milliseconds on 100,000 objects), so they take a background lane that is served
 *   only when no other call waits.
 * Measured by bench/neighbours.ts ("embedded").
 */
export class PgliteLanes {
  private busy = false;
  /** Per lane, the calls waiting by organization; a Map keeps the turn order (see next). */
  private readonly waiting = { fore: new Map<string, (() => void)[]>(), back: new Map<string, (() => void)[]>() };

  async run<T>(lane: "fore" | "back", work: () => Promise<T>): Promise<T> {
    // The connection passes straight from one call to the next waiting one (see release).
    if (this.busy) {
      const party = onBehalfOf.getStore() ?? "";
      const queues = this.waiting[lane];
      await new Promise<void>((resolve) => {
        const queue = queues.get(party);
        if (queue) queue.push(resolve);
        else queues.set(party, [resolve]);
      });
    } else this.busy = true;
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private release(): void {
    const next = this.next(this.waiting.fore) ?? this.next(this.waiting.back);
    if (next) next();
    else this.busy = false;
  }

  /** The first organization's oldest call; that organization then goes to the back of the turn. */
  private next(queues: Map<string, (() => void)[]>): (() => void) | undefined {
    for (const [party, queue] of queues) {
      const call = queue.shift()!;
      queues.delete(party);
      if (queue.length > 0) queues.set(party, queue);
      return call;
    }
    return undefined;
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
