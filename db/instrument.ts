/**
 * Every SQL statement the service sends passes through one of two driver calls: postgres.js
 * `unsafe` (inside or outside a transaction) or PGlite `query`. Wrapping those, rather than
 * each call site, gives metrics and traces for every statement, and the pool's state.
 */

/** Runs one statement (or a whole transaction) and reports it; `operation` is bounded, `statement` is the SQL text without values. */
export type SqlInstrument = <T>(kind: "statement" | "transaction", statement: string, run: () => Promise<T>) => Promise<T>;

export interface PoolState {
  max: number;
  inUse: number;
  idle: number;
  waiting: number;
}

type Fn = (...args: any[]) => any;

/**
 * postgres.js: `unsafe` returns a lazy query that runs when awaited (drizzle awaits it directly
 * or after `.values()`, which returns the same object), so its `then` is what gets timed.
 * `begin` and `savepoint` hand their callback a connection-bound `sql`, wrapped the same way.
 * Only the first `then` is timed: inside a transaction postgres.js itself calls the query's
 * `catch` (which goes through `then`) as it sends it, and every later `then` is the same
 * statement, already sent; timing those counted and traced each statement of a transaction twice.
 */
export function instrumentPostgresJs<S extends object>(sql: S, instrument: SqlInstrument): S {
  return new Proxy(sql, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "unsafe") {
        return (text: string, ...rest: unknown[]) => {
          const query = (value as Fn).call(target, text, ...rest);
          const then = query.then;
          let timed = false;
          query.then = (resolve?: Fn, reject?: Fn) => {
            if (timed) return then.call(query, resolve, reject);
            timed = true;
            return instrument("statement", text, () => then.call(query)).then(resolve, reject);
          };
          return query;
        };
      }
      if (prop === "begin" || prop === "savepoint") {
        return (...args: unknown[]) => {
          const last = args.length - 1;
          const body = args[last] as Fn;
          args[last] = (inner: object) => body(instrumentPostgresJs(inner, instrument));
          return instrument("transaction", prop, () => (value as Fn).apply(target, args));
        };
      }
      return value.bind(target);
    },
  });
}

/**
 * PGlite: one connection; `query` outside and inside `transaction`. Given a gauge, the calls
 * made at the top level are counted in it (statements inside a transaction use the
 * connection the transaction holds).
 */
export function instrumentPglite<C extends object>(client: C, instrument: SqlInstrument, gauge?: SingleConnectionGauge): C {
  const held = <T>(run: () => Promise<T>): Promise<T> => (gauge ? gauge.hold(run) : run());
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "query") return (text: string, ...rest: unknown[]) => held(() => instrument("statement", text, () => (value as Fn).call(target, text, ...rest)));
      if (prop === "transaction") {
        return (body: Fn) => held(() => instrument("transaction", "begin", () => (value as Fn).call(target, (tx: object) => body(instrumentPglite(tx, instrument)))));
      }
      return value.bind(target);
    },
  });
}

/** PGlite runs one statement or transaction at a time: whatever else is asked meanwhile waits. */
export class SingleConnectionGauge {
  private active = 0;

  async hold<T>(run: () => Promise<T>): Promise<T> {
    this.active++;
    try {
      return await run();
    } finally {
      this.active--;
    }
  }

  state(): PoolState {
    return { max: 1, inUse: Math.min(this.active, 1), idle: this.active > 0 ? 0 : 1, waiting: Math.max(this.active - 1, 0) };
  }
}
