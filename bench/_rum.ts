/**
 * `bun bench/_rum.ts`: PostgreSQL's RUM index (the `rum` extension, Debian's
 * postgresql-<major>-rum, installed here when the server does not offer it) against the GIN
 * index the search uses, on the 1,000,000 objects bench/_seed.ts seeds once (BENCH_OBJECTS).
 * Not a service change: what it builds it drops again at the end (BENCH_RUM_KEEP=1 keeps it).
 *
 * For each RUM variant (BENCH_RUM_VARIANTS, "plain,addon"):
 *  - builds it next to the GIN index over (org_id, vector), timed, and says its size;
 *  - times the search's own statements (`PostgresSearch.search`, as the service calls it, no
 *    kept answers: that cache lives in the route, not in the backend) for each term, GIN and
 *    RUM alternating call by call, the order swapped every call. A side is forced by dropping
 *    the other index inside the call's transaction, rolled back after: the planner sees one
 *    full-text index only. BENCH_ITERATIONS calls per side and term (100), after 3 warm-up calls;
 *  - `count(*)` of the matches the same way (the floor of any plan that visits them);
 *  - EXPLAIN (ANALYZE, BUFFERS) of the mid term's statement on each side, to show the index used;
 *  - the write cost: in one rolled-back transaction per round, the search rows of 10,000 new
 *    objects written (the service's insert) and 10,000 existing rows' metadata changed (so their
 *    vector changes), with and without the RUM index, alternating, BENCH_WRITE_ROUNDS (4) each.
 * Prints a markdown report to stdout. PostgreSQL must run on this machine for the package
 * install (or have the extension already).
 */
import { sql, type SQL } from "drizzle-orm";
import { rowsOf, type Db } from "../db/client.ts";
import * as schema from "../db/schema/index.ts";
import type { MediaKind } from "../domain/media/kind.ts";
import { parseQuery } from "../domain/search/query.ts";
import { writeSearchRows } from "../domain/search/index-rows.ts";
import { PostgresSearch, tsQuery } from "../search/postgres.ts";
import { load1, ms } from "./_load.ts";
import { percentiles, seededDatabase } from "./_seed.ts";

const { default: postgres } = await import("postgres");
const { drizzle } = await import("drizzle-orm/postgres-js");

const n = Number(process.env.BENCH_OBJECTS ?? 1_000_000);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 100);
const writeRounds = Number(process.env.BENCH_WRITE_ROUNDS ?? 4);
const WRITE_ROWS = 10_000;
const variants = (process.env.BENCH_RUM_VARIANTS ?? "plain,addon").split(",").filter(Boolean);
const terms = (process.env.BENCH_RUM_TERMS ?? "rare,w123,mid,mid+image,frequent,common").split(",").filter(Boolean);

const GIN = "media_search_org_vector_idx";
const RUM = "media_search_rum_bench_idx";
const VARIANT_SQL: Record<string, string> = {
  plain: `create index ${RUM} on media_search using rum (vector rum_tsvector_ops)`,
  // The rank's tie-break column attached to each posting, so the index could order by it.
  addon: `create index ${RUM} on media_search using rum (vector rum_tsvector_addon_ops, created_at) with (attach = 'created_at', to = 'vector')`,
  // The control: a GIN index over the vector alone in the RUM's place, to tell what RUM itself
  // brings from what leaving the organization out of the index does (no RUM operator class takes a uuid).
  ginvector: `create index ${RUM} on media_search using gin (vector)`,
};

/**
 * BENCH_RUM_DB names an already seeded database to use as it is (one seeded under an earlier
 * schema version: the search's tables are what matters here), else the one bench/_seed.ts keeps.
 */
async function database(): Promise<{ url: string; orgId: string }> {
  const name = process.env.BENCH_RUM_DB;
  if (!name) return seededDatabase(n);
  const url = new URL(process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  url.pathname = `/${name}`;
  const admin = postgres(url.toString(), { max: 1, onnotice: () => {} });
  const [row] = await admin<{ orgId: string }[]>`select o.id as "orgId" from organizations o join buckets b on b.org_id = o.id where o.name = 'Bench' and b.name = 'bench' and b.object_count >= ${n} order by o.created_at limit 1`;
  await admin.end();
  if (!row) throw new Error(`${name} holds no seeded organization of ${n} objects`);
  return { url: url.toString(), orgId: row.orgId };
}
const seeded = await database();
const { orgId } = seeded;
/** The last search statement sent (the one with the probe), for EXPLAIN. */
let lastSearch: { query: string; params: unknown[] } | null = null;
const client = postgres(seeded.url, {
  max: 1,
  onnotice: () => {},
  debug: (_conn, query, params) => {
    if (query.includes("probe as materialized")) lastSearch = { query, params: params as unknown[] };
  },
});
const db = drizzle(client, { schema }) as unknown as Db;
const out: string[] = [];
const say = (line: string) => {
  out.push(line);
  process.stderr.write(`${line}\n`);
};
const one = async <T>(q: SQL) => rowsOf<T>(await db.execute(q))[0]!;
const stamp = () => `${new Date().toISOString().slice(11, 16)} UTC, load ${load1()}`;

/** Rolled back whatever `fn` does; answers what it answered. */
class Rollback extends Error {}
async function rolledBack<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
  let answer: T;
  try {
    await db.transaction(async (tx) => {
      answer = await fn(tx as unknown as Db);
      throw new Rollback();
    });
  } catch (err) {
    if (!(err instanceof Rollback)) throw err;
  }
  return answer!;
}

/** `fn` timed in a transaction where only `side`'s full-text index exists. */
async function onSide(side: "gin" | "rum", fn: (tx: Db) => Promise<unknown>): Promise<number> {
  return rolledBack(async (tx) => {
    await tx.execute(sql.raw(`drop index ${side === "gin" ? RUM : GIN}`));
    const s = performance.now();
    await fn(tx);
    return performance.now() - s;
  });
}

async function ensureRum(): Promise<void> {
  const { available } = await one<{ available: boolean }>(sql`select exists (select 1 from pg_available_extensions where name = 'rum') as available`);
  if (!available) {
    const { major } = await one<{ major: number }>(sql`select current_setting('server_version_num')::int / 10000 as major`);
    const pkg = `postgresql-${major}-rum`;
    console.error(`[bench] installing ${pkg} from Debian's packages`);
    const apt = (args: string[]) => Bun.spawnSync(["apt-get", ...args], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, stdout: "ignore", stderr: "inherit" }).exitCode === 0;
    const install = ["install", "-y", "--no-install-recommends", pkg];
    if (!apt(install) && !(apt(["update"]) && apt(install))) {
      console.error(`[bench] could not install ${pkg}; install it (apt-get install ${pkg}) on the database's machine and run again`);
      process.exit(2);
    }
  }
  await db.execute(sql`create extension if not exists rum`);
}

const sizeOf = async (rel: string) => (await one<{ b: string }>(sql`select pg_relation_size(${rel}::regclass)::bigint as b`)).b;
const mib = (bytes: string | number) => `${(Number(bytes) / 2 ** 20).toFixed(1)} MiB`;

function requestOf(term: string) {
  const [q, kind = null] = term.split("+");
  return { orgId, query: parseQuery(q!), bucketId: null, kind: kind as MediaKind | null, tagIds: [], categoryGroups: [], sizeMin: null, sizeMax: null, dateFrom: null, dateBefore: null, limit: 50, offset: 0, exactUpTo: 10_000 };
}

const countOf = (req: ReturnType<typeof requestOf>) => (tx: Db) =>
  tx.execute(sql`select count(*) from media_search s where s.vector @@ ${tsQuery(req.query)} and s.org_id = ${orgId}${req.kind ? sql` and s.kind = ${req.kind}` : sql``}`);

/** Alternating GIN and RUM calls of `fn`, the order swapped each call. */
async function alternate(runs: number, fn: (tx: Db) => Promise<unknown>) {
  const t = { gin: [] as number[], rum: [] as number[] };
  for (let i = -3; i < runs; i++) {
    const order: ("gin" | "rum")[] = i % 2 === 0 ? ["gin", "rum"] : ["rum", "gin"];
    for (const side of order) {
      const took = await onSide(side, fn);
      if (i >= 0) t[side].push(took);
    }
  }
  return { gin: percentiles(t.gin), rum: percentiles(t.rum) };
}

/** The plan lines naming a scan, from EXPLAIN ANALYZE of the search's main statement as last sent on `side`. */
async function planOf(side: "gin" | "rum", req: ReturnType<typeof requestOf>): Promise<string[]> {
  return rolledBack(async (tx) => {
    await tx.execute(sql.raw(`drop index ${side === "gin" ? RUM : GIN}`));
    lastSearch = null;
    await new PostgresSearch(tx).search(req);
    const main = lastSearch as { query: string; params: unknown[] } | null;
    if (!main) return ["(statement not seen)"];
    const rows = await tx.execute(sql.raw(`explain (analyze, buffers, costs off, timing off) ${inline(main.query, main.params)}`));
    const lines = rowsOf<{ "QUERY PLAN": string }>(rows).map((r) => r["QUERY PLAN"]);
    // The scans of the index branch (with their buffers) and the statement's time.
    return lines.filter((l, i) => /Bitmap|Index Scan|Execution Time/.test(l) || (/Buffers/.test(l) && /Bitmap|Index Scan/.test(lines[i - 1] ?? "")));
  });
}

/** A statement's text with its $n parameters written in as literals, for EXPLAIN. */
function inline(query: string, params: unknown[]): string {
  return query.replace(/\$(\d+)/g, (_m, i: string) => {
    const v = params[Number(i) - 1];
    return v === null || v === undefined ? "null" : typeof v === "number" ? String(v) : `'${String(v).replace(/'/g, "''")}'`;
  });
}

async function main() {
  await ensureRum();
  await db.execute(sql.raw(`drop index if exists ${RUM}`));
  const [pg] = rowsOf<{ v: string; sb: string }>(await db.execute(sql`select current_setting('server_version') as v, current_setting('shared_buffers') as sb`));
  say(`# RUM against GIN, ${n.toLocaleString("en-US")} objects (${new Date().toISOString().slice(0, 10)}, PostgreSQL ${pg!.v}, shared_buffers ${pg!.sb})`);
  say("");
  say(`media_search ${mib(await sizeOf("media_search"))}, GIN ${GIN} ${mib(await sizeOf(GIN))}; ${stamp()}`);

  for (const variant of variants) {
    say("");
    say(`## ${variant}: \`${VARIANT_SQL[variant]}\``);
    let s = performance.now();
    await db.execute(sql.raw(VARIANT_SQL[variant]!));
    const built = performance.now() - s;
    say(`built in ${(built / 1000).toFixed(1)} s, ${mib(await sizeOf(RUM))}; ${stamp()}`);
    // A GIN twin built the same way, for the build time to compare with.
    if (variant === variants[0]) {
      s = performance.now();
      await db.execute(sql.raw(`create index media_search_gin_twin_bench_idx on media_search using gin (org_id, vector)`));
      const twin = performance.now() - s;
      say(`(the GIN index over (org_id, vector) built the same way: ${(twin / 1000).toFixed(1)} s, ${mib(await sizeOf("media_search_gin_twin_bench_idx"))}; dropped again)`);
      await db.execute(sql.raw(`drop index media_search_gin_twin_bench_idx`));
    }
    // Warm: each index read once whole (as a search load would keep it).
    await db.execute(sql.raw(`select count(*) from media_search where vector @@ 'zzz-not-a-word'::tsquery`));

    for (const side of ["gin", "rum"] as const) {
      const plan = await planOf(side, requestOf("mid"));
      say(`mid term, ${side} side, EXPLAIN (ANALYZE, BUFFERS): ${plan.map((l) => l.trim()).join(" | ")}`);
    }

    say("");
    say(`| term | matches | calls per side | search GIN p50 / p95 (ms) | search RUM p50 / p95 (ms) | p95 RUM/GIN | count(*) GIN p50 / p95 | count(*) RUM p50 / p95 | load at the end |`);
    say("|---|---:|---:|---|---|---:|---|---|---|");
    for (const term of terms) {
      const req = requestOf(term);
      const probe = await new PostgresSearch(db).search(req);
      const total = `${probe.total}${probe.totalRelation === "gte" ? "+" : ""}`;
      const searchT = await alternate(iterations, (tx) => new PostgresSearch(tx).search(req));
      const common = probe.totalRelation === "gte";
      const countT = common ? null : await alternate(Math.min(iterations, 50), countOf(req));
      say(
        `| ${term} | ${total} | ${iterations} | ${ms(searchT.gin.p50)} / ${ms(searchT.gin.p95)} | ${ms(searchT.rum.p50)} / ${ms(searchT.rum.p95)} | ${(searchT.rum.p95 / searchT.gin.p95).toFixed(2)} | ${countT ? `${ms(countT.gin.p50)} / ${ms(countT.gin.p95)}` : "—"} | ${countT ? `${ms(countT.rum.p50)} / ${ms(countT.rum.p95)}` : "—"} | ${load1()} |`,
      );
    }

    // Write cost: the same writes with the RUM index and without it (dropped in the transaction).
    say("");
    const ids = rowsOf<{ id: string }>(await db.execute(sql`select object_id as id from media_search where org_id = ${orgId} order by md5(object_id::text) limit ${WRITE_ROWS}`)).map((r) => r.id);
    const bucket = await one<{ id: string }>(sql`select id from buckets where org_id = ${orgId} and name = 'bench'`);
    const w = { with: { insert: [] as number[], update: [] as number[] }, without: { insert: [] as number[], update: [] as number[] } };
    for (let round = 0; round < writeRounds; round++) {
      for (const side of round % 2 === 0 ? (["with", "without"] as const) : (["without", "with"] as const)) {
        const [ins, upd] = await rolledBack(async (tx) => {
          if (side === "without") await tx.execute(sql.raw(`drop index ${RUM}`));
          const tag = `rumw${round}${side}`;
          // New objects as the seed makes them (same words and frequencies), not yet searchable.
          await tx.execute(sql`
            insert into media_objects (id, org_id, bucket_id, key, size, content_type, kind, metadata, created_at, updated_at)
            select gen_random_uuid(), ${orgId}, ${bucket.id},
              ${tag} || '/' || (case when i % 2 = 0 then 'common-' else '' end) || (case when i % 10 = 0 then 'frequent-' else '' end)
                || (case when i % 100 = 0 then 'mid-' else '' end) || 'w' || (i % 1000) || '-' || i || '.jpg',
              i, 'image/jpeg', (array['image','video','audio','pdf','3d','other'])[1 + i % 6],
              jsonb_build_object('camera', 'cam' || (i % 37), 'note', 'shot ' || (i % 500)), now(), now()
            from generate_series(1, ${WRITE_ROWS}) i`);
          let t0 = performance.now();
          await writeSearchRows(tx, sql`o.org_id = ${orgId} and o.bucket_id = ${bucket.id} and o.key like ${`${tag}/%`}`);
          const insert = performance.now() - t0;
          t0 = performance.now();
          await tx.execute(sql`update media_search set meta = meta || ' edited' || ${String(round)} where object_id = any(string_to_array(${ids.join(",")}, ',')::uuid[])`);
          const update = performance.now() - t0;
          return [insert, update];
        });
        w[side].insert.push(ins);
        w[side].update.push(upd);
      }
    }
    const med = (xs: number[]) => percentiles(xs).p50;
    say(
      `Writes of ${WRITE_ROWS.toLocaleString("en-US")} rows, ${writeRounds} rounds each, alternating, median: insert of the search rows of new objects ${ms(med(w.with.insert))} ms with RUM, ${ms(med(w.without.insert))} ms without (rounds with ${w.with.insert.map((x) => x.toFixed(0)).join(", ")}; without ${w.without.insert.map((x) => x.toFixed(0)).join(", ")}); update of existing rows' metadata ${ms(med(w.with.update))} ms with, ${ms(med(w.without.update))} ms without (with ${w.with.update.map((x) => x.toFixed(0)).join(", ")}; without ${w.without.update.map((x) => x.toFixed(0)).join(", ")}); ${stamp()}`,
    );
    if (!process.env.BENCH_RUM_KEEP || variant !== variants.at(-1)) await db.execute(sql.raw(`drop index ${RUM}`));
    // The rolled-back writes left dead rows and GIN pending entries: gone before the next variant.
    await db.execute(sql`vacuum analyze media_search`);
  }
}

try {
  await main();
} finally {
  // The rolled-back writes leave dead rows (and GIN pending entries): cleaned for the next scenario.
  await db.execute(sql`vacuum analyze media_search`).catch(() => {});
  await client.end({ timeout: 5 });
}
process.stdout.write(`${out.join("\n")}\n`);
