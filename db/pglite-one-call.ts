import { type PGlite, parse, protocol, type QueryOptions, type Results, type Transaction } from "@electric-sql/pglite";
import { PgliteSession } from "drizzle-orm/pglite";

type BackendMessage = Awaited<ReturnType<PGlite["execProtocolStream"]>>[number];

/** The parts of PGlite's own `query` path it keeps to itself (underscored, not private): reached at run time. */
interface Inside {
  _checkReady(): Promise<void>;
  _runExclusiveTransaction<T>(run: () => Promise<T>): Promise<T>;
  _runExclusiveQuery<T>(run: () => Promise<T>): Promise<T>;
  serializers: Record<number, (value: unknown) => string>;
  parsers: Record<number, (value: string, typeId?: number) => unknown>;
}

const serialize = protocol.serialize;

/** How many statement texts keep their parameters' types; past it the oldest is forgotten (and looked up again if it comes back). */
export const PARAM_TYPES_KEPT = 2000;

/**
 * How many statements are kept prepared on the server; past it, a new text asked to be kept
 * runs unnamed. The code's prepared statements are a few dozen texts; each holds its plan in
 * PGlite's memory, which never shrinks.
 */
export const NAMED_KEPT = 300;

/** Through the proxies around the client (lanes, instruments): asks for a statement text to be kept prepared. */
const KEEP = Symbol.for("media.pglite.keep");

/** Numbers the server-side names; counted for the process, so two wrappers of one client never reuse a name. */
let prepares = 0;

function concat(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * PGlite's `query` hands its server five protocol messages one call at a time (parse,
 * describe the statement, bind, describe the portal, execute) and a sixth (sync) after
 * them. Here a statement is one call: its parameter types (what the describe is for: which
 * type to write each value as) are kept per text, and every later run of the text sends the
 * other messages together. Such a statement stays unnamed, as PGlite sends it, so PostgreSQL
 * parses and plans it per call and its plan is the one it was before.
 *
 * A text asked to be kept (keepNamedStatements: the statements the code prepares by name,
 * which postgres.js prepares on the server) is prepared once under a name of its own, and each
 * later run is a bind and execute of it: no parse, and the plans PostgreSQL keeps for
 * prepared statements, as on a PostgreSQL server. bench/pglite-calls.ts, per call: a lookup by
 * primary key 336 -> 267 µs as one call; the GET's object view 1,067 µs, 1,043 as one call and
 * 176 prepared: parsing and planning its statement had been five sixths of it.
 *
 * `query` outside and inside `transaction` go this way; `exec` (the simple protocol) and a
 * query with a blob (COPY) or its own parameter types go PGlite's own way.
 */
export function inOneCall(client: PGlite): PGlite {
  const inside = client as unknown as Inside;
  const paramTypes = new Map<string, number[]>();
  /** Texts asked to be kept: their server-side name and parameter types once prepared there (null until then). */
  const named = new Map<string, { name: string; types: number[] } | null>();
  const keep = (text: string) => {
    if (!named.has(text) && named.size < NAMED_KEPT) named.set(text, null);
  };

  /** Parses `text` (under `name`, or unnamed) and answers its parameters' types. */
  const describeParams = async (text: string, name?: string): Promise<number[]> =>
    parse.parseDescribeStatementResults(await client.execProtocolStream(concat([serialize.parse({ name, text }), serialize.describe({ type: "S", name }), serialize.sync()]), { syncToFs: false }));

  const typesOf = async (text: string): Promise<number[]> => {
    const known = paramTypes.get(text);
    if (known) return known;
    const types = await describeParams(text);
    if (paramTypes.size >= PARAM_TYPES_KEPT) paramTypes.delete(paramTypes.keys().next().value!);
    paramTypes.set(text, types);
    return types;
  };

  /** A kept text's name and parameter types, prepared on the server the first time (its types then come with it). */
  const preparedAs = async (text: string): Promise<{ name: string; types: number[] }> => {
    const known = named.get(text);
    if (known) return known;
    const name = `kept_${++prepares}`;
    const prepared = { name, types: await describeParams(text, name) };
    named.set(text, prepared);
    return prepared;
  };

  /** One statement, inside the query lock PGlite's own `query` takes. */
  const run = async <T>(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<T>> => {
    let messages: BackendMessage[];
    try {
      const kept = named.has(text) ? await preparedAs(text) : null;
      const types = kept ? kept.types : await typesOf(text);
      const values = params.map((param, i) => {
        if (param === null || param === undefined) return null;
        const write = inside.serializers[types[i]!];
        return write ? write(param) : String(param);
      });
      // Sync is part of the call: after an error the server skips to it, so the connection
      // is ready for the next statement whatever happened.
      const bind = kept ? [serialize.bind({ statement: kept.name, values: values as string[] })] : [serialize.parse({ text }), serialize.bind({ values: values as string[] })];
      messages = await client.execProtocolStream(concat([...bind, serialize.describe({ type: "P" }), serialize.execute({}), serialize.sync()]), { syncToFs: false });
    } catch (err) {
      // As PGlite's own errors carry them (its makePGliteError).
      if (err && typeof err === "object" && "code" in err) Object.assign(err, { query: text, params, queryOptions: options });
      throw err;
    }
    return parse.parseResults(messages, inside.parsers, options)[0] as Results<T>;
  };

  const ownWay = (options: QueryOptions | undefined) => options?.blob !== undefined || options?.paramTypes !== undefined;

  const wrapTransaction = (tx: Transaction): Transaction =>
    new Proxy(tx, {
      get(target, prop) {
        if (prop === KEEP) return keep;
        const value = Reflect.get(target, prop, target);
        if (prop !== "query") return typeof value === "function" ? value.bind(target) : value;
        return <T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> => {
          if (ownWay(options)) return target.query<T>(text, params, options);
          if (target.closed) return Promise.reject(new Error("Transaction is closed"));
          return inside._runExclusiveQuery(() => run<T>(text, params, options));
        };
      },
    });

  return new Proxy(client, {
    get(target, prop) {
      if (prop === KEEP) return keep;
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "query") {
        return async <T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> => {
          if (ownWay(options)) return target.query<T>(text, params, options);
          await inside._checkReady();
          // No transaction holds the connection here (PGlite's own `query` takes the same two locks), so
          // the files are brought up to date after the statement, as PGlite does.
          return inside._runExclusiveTransaction(() =>
            inside._runExclusiveQuery(async () => {
              const result = await run<T>(text, params, options);
              await target.syncToFs();
              return result;
            }),
          );
        };
      }
      if (prop === "transaction") return <T>(body: (tx: Transaction) => Promise<T>) => target.transaction((tx) => body(wrapTransaction(tx)));
      return value.bind(target);
    },
  });
}

/**
 * Drizzle's PGlite driver ignores the name given to `.prepare(name)` (and so the service's
 * prepared statements', domain/core/prepared.ts); postgres.js prepares such a statement on the
 * server and sends every other unnamed. After this call the PGlite driver asks its client
 * (inOneCall's, through any proxy around it) to keep those same texts prepared, so both
 * databases plan the same statements the same way: a kept statement may switch to a generic
 * plan after five runs, as PostgreSQL decides, and every other statement is planned per call.
 * Idempotent; it changes Drizzle's PGlite session for the whole process, and a client that is
 * not inOneCall's is asked nothing.
 */
export function keepNamedStatements(): void {
  const proto = PgliteSession.prototype as unknown as { prepareQuery: (...args: unknown[]) => unknown; [KEEP]?: true };
  if (proto[KEEP]) return;
  proto[KEEP] = true;
  const own = proto.prepareQuery;
  proto.prepareQuery = function (this: { client: Record<symbol, unknown> }, query: unknown, fields: unknown, name: unknown, ...rest: unknown[]) {
    // Most calls are unnamed (every query built without `.prepare`): they skip the lookup through the client's proxies.
    const keepText = name !== undefined ? this.client[KEEP] : undefined;
    if (typeof keepText === "function") keepText((query as { sql: string }).sql);
    return own.call(this, query, fields, name, ...rest);
  };
}
