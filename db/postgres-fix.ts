import { plugin } from "bun";

/**
 * postgres.js 3.4.9 (porsager/postgres#1066, #1154, #1208; unreleased fix in PR #1209) buffers
 * small writes and flushes them from a setImmediate. When PostgreSQL closes the connection
 * first, `closed()` clears that immediate but leaves its handle and the buffered bytes behind,
 * and sets `socket = null`. Under Bun the flush can still run: `socket.write` on null throws
 * from the immediate, outside any promise, and the whole process dies (seen here with
 * `pg_ctl restart` under traffic, test/hardening/faults-postgres.test.ts). When it does not run,
 * the stale handle stops the next connection from ever sending its startup message.
 *
 * The patch, applied as the module is loaded (node_modules stays untouched):
 * - a flush without a socket fails the connection's queries with CONNECTION_CLOSED, which the
 *   surface maps to 503, instead of throwing where nobody can catch it;
 * - `closed()` forgets the pending flush and its bytes, so a reconnection starts clean.
 * Each replacement is checked; on a postgres.js whose source differs (fixed upstream) nothing
 * is patched and `postgresFixApplied` stays false, which the fault test reports.
 */
export let postgresFixApplied = false;

const replacements: [string, string][] = [
  [
    "function nextWrite(fn) {\n    const x = socket.write(chunk, fn)",
    "function nextWrite(fn) {\n    if (!socket) {\n      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)",
  ],
  [
    "incomings = null\n    clearImmediate(nextWriteTimer)\n    socket.removeListener('data', data)",
    "incomings = null\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    socket.removeListener('data', data)",
  ],
];

/**
 * postgres.js sends a statement it does not keep prepared (Drizzle's unnamed queries: every
 * `db.execute` and every builder query not `.prepare`d) in two round trips when it has
 * parameters: Parse + Describe, a wait for the parameter types, then Bind + Execute. It asks
 * so that it can serialize each value by its type. Drizzle has already turned every value
 * into what the driver sends as text (dates, JSON and arrays as strings, through the
 * column's mapping), and what postgres.js still infers from a value (booleans, bigints,
 * dates, bytes) it declares in the Parse either way; so the answer changes no value, only
 * when the Bind leaves. With this change such a statement goes in one write and one round
 * trip (Parse, Describe, Bind, Execute, Sync), as node-postgres and JDBC send it, and it no
 * longer stops the connection's pipeline. Statements kept prepared still describe once per
 * connection. Measured in bench/notes/2026-11-27-fifth-sitting.md.
 */
export let postgresOneRoundTrip = false;

const oneRoundTrip: [string, string] = [
  "q.describeFirst = q.onlyDescribe || (parameters.length && !q.prepared)",
  "q.describeFirst = q.onlyDescribe || (parameters.length && q.prepare && !q.prepared)",
];

/**
 * postgres.js 3.4.9 (porsager/postgres#1223, open) reads the server's array types on every new
 * connection with an async function whose promise nobody holds. When the connection dies during
 * that read (PostgreSQL restarting while the pool reconnects under traffic), the query that
 * opened the connection is failed as it should be, and the read's own rejection (`read
 * ECONNRESET`, with no caller in its stack) is left unhandled: it ended the worker in a full
 * test run of 2026-11-29, and fails the test file whose process runs a test server. The
 * patch drops that duplicate: the failure has already reached the query that waits on it.
 */
export let postgresTypesReadGuarded = false;

const typesRead: [string, string] = ["return fetchArrayTypes()", "return fetchArrayTypes().catch(noop)"];

/**
 * postgres.js keeps its pool's queues private. One getter added to the `sql` object reads
 * their lengths, for the pool metrics (app/metrics.ts): connections serving queries (busy,
 * full, reserved by a transaction), idle ones, and queries waiting for a connection. Applied
 * the same way; on a source that differs the getter is absent and the pool is not reported.
 */
const poolGetter: [string, string] = [
  "Object.assign(sql, {\n    get parameters() { return options.parameters },",
  "Object.assign(sql, {\n    get parameters() { return options.parameters },\n    get poolState() { return { max: options.max, inUse: busy.length + full.length + reserved.length, idle: open.length, waiting: queries.length } },",
];

plugin({
  name: "postgres.js pool state",
  setup(build) {
    build.onLoad({ filter: /[\\/]postgres[\\/]src[\\/]index\.js$/ }, async ({ path }) => {
      const source = await Bun.file(path).text();
      if (!source.includes(poolGetter[0])) return { contents: source, loader: "js" };
      return { contents: source.replace(poolGetter[0], poolGetter[1]), loader: "js" };
    });
  },
});

plugin({
  name: "postgres.js closed-socket write guard",
  setup(build) {
    build.onLoad({ filter: /[\\/]postgres[\\/]src[\\/]connection\.js$/ }, async ({ path }) => {
      let source = await Bun.file(path).text();
      if (source.includes(typesRead[0]) && source.includes("noop = () =>")) {
        source = source.replace(typesRead[0], typesRead[1]);
        postgresTypesReadGuarded = true;
      }
      if (source.includes(oneRoundTrip[0])) {
        source = source.replace(oneRoundTrip[0], oneRoundTrip[1]);
        postgresOneRoundTrip = true;
      }
      if (!replacements.every(([from]) => source.includes(from))) return { contents: source, loader: "js" };
      postgresFixApplied = true;
      return { contents: replacements.reduce((s, [from, to]) => s.replace(from, to), source), loader: "js" };
    });
  },
});
