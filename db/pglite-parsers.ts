import { types } from "@electric-sql/pglite";

const raw = (value: string) => value;

/**
 * The parsers Drizzle hands PGlite with every query (drizzle-orm/pglite/session.js): dates,
 * times and intervals, and their arrays, come back as the text PostgreSQL sent, for Drizzle to
 * map. PGlite merges per-query parsers into its table of every type's parser (about 300) by
 * copying that table, on every query: 2-3 ms per statement on a busy 2-vCPU machine, the
 * biggest single cost in the embedded server's profile under load. Given once to the client
 * instead, the merge never happens, and the answers are the same.
 */
export const DRIZZLE_PARSERS = {
  [types.TIMESTAMP]: raw,
  [types.TIMESTAMPTZ]: raw,
  [types.INTERVAL]: raw,
  [types.DATE]: raw,
  1231: raw, // numeric[]
  1115: raw, // timestamp[]
  1185: raw, // timestamptz[]
  1187: raw, // interval[]
  1182: raw, // date[]
};

type Fn = (...args: any[]) => any;

/** The client with Drizzle's per-query `parsers` dropped: the client was created with them (DRIZZLE_PARSERS). */
export function withParsersOnce<C extends object>(client: C): C {
  const strip = (options: unknown) => {
    if (!options || typeof options !== "object" || !("parsers" in options)) return options;
    const { parsers: _given, ...rest } = options as Record<string, unknown>;
    return rest;
  };
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "query") return (text: string, params?: unknown[], options?: unknown) => (value as Fn).call(target, text, params, strip(options));
      // A transaction's own connection gets its queries the same way.
      if (prop === "transaction") return (body: Fn) => (value as Fn).call(target, (tx: object) => body(withParsersOnce(tx)));
      return value.bind(target);
    },
  });
}
