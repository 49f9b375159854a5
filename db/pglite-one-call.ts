import { type PGlite, parse, protocol, type QueryOptions, type Results, type Transaction } from "@electric-sql/pglite";

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
 * them, and each call into the server costs about as much as a small statement's work:
 * a lookup by primary key took 330-470 µs that way and 160-240 µs as one call (2-vCPU
 * machine). Its second call, the
 * statement's description, only tells which parameter types to write the values as; the
 * types are kept per statement text, so every later run of a text is one call of the same
 * messages but that one. The statement stays unnamed, as PGlite sends it: PostgreSQL parses
 * and plans it afresh every time, so every plan is the one it was before.
 *
 * `query` outside and inside `transaction` go this way; `exec` (the simple protocol) and a
 * query with a blob (COPY) or its own parameter types go PGlite's own way.
 */
export function inOneCall(client: PGlite): PGlite {
  const inside = client as unknown as Inside;
  const paramTypes = new Map<string, number[]>();

  const typesOf = async (text: string): Promise<number[]> => {
    const known = paramTypes.get(text);
    if (known) return known;
    const messages = await client.execProtocolStream(concat([serialize.parse({ text }), serialize.describe({ type: "S" }), serialize.sync()]), { syncToFs: false });
    const types = parse.parseDescribeStatementResults(messages);
    if (paramTypes.size >= PARAM_TYPES_KEPT) paramTypes.delete(paramTypes.keys().next().value!);
    paramTypes.set(text, types);
    return types;
  };

  /** One statement, inside the query lock PGlite's own `query` takes. */
  const run = async <T>(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<T>> => {
    let messages: BackendMessage[];
    try {
      const types = await typesOf(text);
      const values = params.map((param, i) => {
        if (param === null || param === undefined) return null;
        const write = inside.serializers[types[i]!];
        return write ? write(param) : String(param);
      });
      // Sync is part of the call: after an error the server skips to it, so the connection
      // is ready for the next statement whatever happened.
      messages = await client.execProtocolStream(
        concat([serialize.parse({ text }), serialize.bind({ values: values as string[] }), serialize.describe({ type: "P" }), serialize.execute({}), serialize.sync()]),
        { syncToFs: false },
      );
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
