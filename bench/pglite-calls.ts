/**
 * `npx bun bench/pglite-calls.ts`: the embedded database's statements sent as one call each,
 * with and without the code's prepared statements kept prepared (db/pglite-one-call.ts),
 * against PGlite's own `query` (six calls into its server per statement), on one PGlite over the seeded embedded database of bench/_seed.ts
 * (BENCH_OBJECTS, 10,000), in this process, alternating round by round. Each variant is a
 * Drizzle handle over the same client, with the parsers given once (db/pglite-parsers.ts), as
 * the service opens it. What is timed is the service's own code:
 * - a primary-key read (the query builder, one small row);
 * - the object view a GET answers (`loadMediaView`: one prepared statement, the view as JSON);
 * - a page of 50 views (`viewsOf`, what a search page answers);
 * - a metadata update in a transaction (begin, update, commit), rolled back by hand after.
 * Wall time and this process's CPU per call (the database runs on this thread).
 * BENCH_ITERATIONS calls per variant and round (1,000), BENCH_ROUNDS (5). Prints a Markdown
 * section and writes it to bench/results/pglite-calls.md unless BENCH_NO_WRITE is set.
 */
import { PGlite } from "@electric-sql/pglite";
import { btree_gin } from "@electric-sql/pglite/contrib/btree_gin";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/pglite";
import type { Db } from "../db/client.ts";
import { inOneCall, keepNamedStatements } from "../db/pglite-one-call.ts";
import { DRIZZLE_PARSERS, withParsersOnce } from "../db/pglite-parsers.ts";
import * as schema from "../db/schema/index.ts";
import { mediaObjects } from "../db/schema/index.ts";
import { systemClock } from "../domain/core/clock.ts";
import type { Caller } from "../domain/access/caller.ts";
import { loadMediaView, viewsOf } from "../domain/media/media.ts";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { load1, median, writeSection } from "./_load.ts";
import { seededDataDir } from "./_seed.ts";

const n = Number(process.env.BENCH_OBJECTS ?? 10_000);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 1000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);

const seeded = await seededDataDir(n);
const client = await PGlite.create(seeded.dir, { extensions: { pg_trgm, btree_gin }, parsers: DRIZZLE_PARSERS });
keepNamedStatements();
// One call, none kept: the client as seen without the means to keep a statement (the driver then asks nothing).
const keepless = new Proxy(inOneCall(client), { get: (target, prop) => (prop === Symbol.for("media.pglite.keep") ? undefined : Reflect.get(target, prop)) });
const variants: { name: string; db: Db }[] = [
  { name: "PGlite's own query", db: drizzle(withParsersOnce(client), { schema }) as unknown as Db },
  { name: "one call, nothing kept", db: drizzle(withParsersOnce(keepless), { schema }) as unknown as Db },
  { name: "one call, prepared statements kept (the service)", db: drizzle(withParsersOnce(inOneCall(client)), { schema }) as unknown as Db },
];
const ids = (await client.query<{ id: string }>(`select id from media_objects where org_id = $1 order by id limit 1000`, [seeded.orgId])).rows.map((r) => r.id);
const caller: Caller = { orgId: seeded.orgId, userId: crypto.randomUUID(), apiKeyId: null, scopes: new Set(["admin"]), bucketId: null, principal: "bench" };

const operations: { name: string; run: (db: Db, i: number) => Promise<unknown> }[] = [
  { name: "primary-key read (query builder)", run: (db, i) => db.select({ id: mediaObjects.id, key: mediaObjects.key, size: mediaObjects.size }).from(mediaObjects).where(eq(mediaObjects.id, ids[i % ids.length]!)) },
  { name: "object view (GET, prepared statement)", run: (db, i) => loadMediaView({ db, clock: systemClock }, caller, ids[i % ids.length]!) },
  { name: "50 views (a search page)", run: (db, i) => viewsOf({ db, clock: systemClock }, seeded.orgId, ids.slice((i * 50) % 950, ((i * 50) % 950) + 50), { live: true, primary: { db, clock: systemClock } }) },
  {
    name: "metadata update (transaction)",
    run: (db, i) => db.transaction(async (tx) => tx.update(mediaObjects).set({ metadata: { bench: i } }).where(eq(mediaObjects.id, ids[i % ids.length]!))),
  },
];

const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

const loadStart = load1();
const pgliteVersion = (JSON.parse(readFileSync(new URL("../node_modules/@electric-sql/pglite/package.json", import.meta.url), "utf8")) as { version: string }).version;
const results = new Map<string, { wall: number[]; cpu: number[] }>();
for (let round = 0; round < rounds; round++) {
  for (const op of operations) {
    // Alternating, the order swapped every round; a warm-up call each first.
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const v of order) {
      for (let i = 0; i < 20; i++) await op.run(v.db, i);
      const cpu = cpuMs();
      const started = performance.now();
      for (let i = 0; i < iterations; i++) await op.run(v.db, i);
      const key = `${op.name}|${v.name}`;
      const r = results.get(key) ?? { wall: [], cpu: [] };
      r.wall.push(((performance.now() - started) / iterations) * 1000);
      r.cpu.push(((cpuMs() - cpu) / iterations) * 1000);
      results.set(key, r);
    }
  }
}
// The updates' metadata back as it was seeded.
await client.query(`update media_objects set metadata = '{}'::jsonb where metadata ? 'bench'`);
await client.close();

const lines = [
  `## pglite-calls — the embedded database's statements: one call, prepared statements kept, against PGlite's own query`,
  "",
  `\`npx bun bench/pglite-calls.ts\`. ${n.toLocaleString("en-US")} seeded objects (bench/_seed.ts), ${iterations} calls per variant, operation and round, ${rounds} rounds alternating. Medians of the rounds, µs per call; CPU is this process's (the database runs on its thread; above the wall time, the collector's helper threads).`,
  "",
  `Date ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC; ${cpus().length} vCPU ${cpus()[0]?.model.trim() ?? ""}; Bun ${Bun.version}, PGlite ${pgliteVersion}. Load average (1 min) ${loadStart} at the start, ${load1()} at the end.`,
  "",
  `| operation | ${variants.map((v) => `${v.name}: wall / CPU`).join(" | ")} | own over the service's, wall |`,
  `|---|${variants.map(() => "---").join("|")}|---:|`,
];
for (const op of operations) {
  const of = (v: { name: string }) => results.get(`${op.name}|${v.name}`)!;
  const cells = variants.map((v) => `${median(of(v).wall).toFixed(0)} / ${median(of(v).cpu).toFixed(0)}`);
  lines.push(`| ${op.name} | ${cells.join(" | ")} | ${(median(of(variants[0]!).wall) / median(of(variants[2]!).wall)).toFixed(2)}x |`);
}
console.log(lines.join("\n"));
if (!process.env.BENCH_NO_WRITE) writeSection("pglite-calls", lines.join("\n"));
