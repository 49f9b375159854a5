/**
 * `npm run bench -- search-text`: search over 1,000,000 objects when a share of them carry the
 * text read from inside them, against the same objects without it, on real PostgreSQL.
 *
 * The objects are bench/_seed.ts's (its reusable database, seeded if missing). The run copies
 * that database (`CREATE DATABASE … TEMPLATE …`, dropped at the end; BENCH_KEEP_COPY=1 keeps
 * it) and gives the copy its text:
 * - 20% of the objects (chosen by a hash of their id, whatever their seeded kind: the seed's
 *   kinds follow the same counter as its words, and no object with the 1% term is a "pdf") are
 *   PDFs whose text was read: 1 to 5 pages of 100 words (300 words on average), written as
 *   media_text rows (source "pdf", one per page) and folded into media_search.body by the
 *   worker's own statement (touchSearch, as storeText runs it), a batch of 1,000 objects per
 *   transaction;
 * - the words come from a vocabulary of 20,000 made-up words (consonant-vowel syllables, none
 *   in the seed's names, labels or metadata) drawn with Zipf's law (rank k with probability
 *   ~1/k), from a fixed seed, so a run is repeatable;
 * - two words occur only in the text, once in a document: "inkwell" in every 20th document
 *   (1% of all objects: as many matches as the 1% term "mid") and "quill" in every 100th (1% of
 *   the documents).
 * Then the copy is compacted (VACUUM FULL, so both databases are as a bulk load leaves them:
 * the seed is bulk-inserted, and an update per object leaves dead rows and a fragmented index
 * until then), and both are measured in the same run, alternating request by request: the
 * HTTP search (`GET /api/search?q=…&limit=50`, one server on each database, each in its own
 * process) and the same SQL called directly (PostgresSearch.search, which also reads the
 * matches' snippets). Also stated: the sizes of the full-text index, of media_search (TOAST
 * included) and of media_text per million objects, how many search rows are stored out of
 * line (TOAST) and what the fill cost. A vector that large goes to TOAST (PostgreSQL moves a
 * row's largest value out once the row passes about 2 kB, and pglz does not shrink a tsvector),
 * so the first pass fills the copy with every column EXTENDED (the storage before migration
 * 0028) and a second pass measures it with the vector kept in the row and the body, which no
 * search reads, moved out instead (column storage MAIN for the vector and the small columns a
 * search reads, as migration 0028 sets, and a rewrite).
 * BENCH_ITERATIONS per query (100; the 50% term 50). BENCH_NO_WRITE=1 leaves
 * bench/results/search-text.md alone.
 */
import { join } from "node:path";
import { mkdirSync, rmSync } from "node:fs";
import { sql } from "drizzle-orm";
import { SignJWT } from "jose";
import postgres from "postgres";
import { openDatabase, rowsOf, type Db } from "../db/client.ts";
import { parseQuery } from "../domain/search/query.ts";
import { touchSearch } from "../domain/search/index-rows.ts";
import { matchesOf, PostgresSearch } from "../search/postgres.ts";
import { deleteRedisPrefix, int, load1, machine, ms, PG_URL, REDIS_URL, rssMiB, startTarget, stopOnExit, writeSection } from "./_load.ts";
import { percentiles, seededDatabase } from "./_seed.ts";

const n = Number(process.env.BENCH_OBJECTS ?? 1_000_000);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 100);
const SHARE = 5; // one object in SHARE has text: 20%
const WORDS_PER_PAGE = 100;
const VOCABULARY = 20_000;
const BATCH = 1000;

// --- the made-up vocabulary and its Zipf draw ---------------------------------------------
// No c, m, q, r, w, x or y, and every word ends in a vowel or "n": nothing here is a word of
// the seed ("common", "frequent", "mid", "rare", "w123", "photos", "jpg", "tag", "cat", "cam",
// "shot") or one of the planted words.
const CONSONANTS = "bdfghjklnpstvz";
const VOWELS = "aeiou";
const SYLLABLES = [...CONSONANTS].flatMap((c) => [...VOWELS].map((v) => c + v));
function word(rank: number): string {
  let k = rank - 1;
  if (k < SYLLABLES.length) return `${SYLLABLES[k]}n`;
  k -= SYLLABLES.length;
  if (k < SYLLABLES.length ** 2) return SYLLABLES[Math.floor(k / SYLLABLES.length)]! + SYLLABLES[k % SYLLABLES.length]!;
  k -= SYLLABLES.length ** 2;
  const s = SYLLABLES.length;
  return SYLLABLES[Math.floor(k / s / s) % s]! + SYLLABLES[Math.floor(k / s) % s]! + SYLLABLES[k % s]!;
}
const vocabulary = Array.from({ length: VOCABULARY }, (_, i) => word(i + 1));
if (new Set(vocabulary).size !== VOCABULARY) throw new Error("the vocabulary has repeated words");
// mulberry32: a small seeded generator, so every run writes the same text.
let state = 0x5eed;
function random(): number {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
/** Rank floor((N+1)^u) for u uniform in [0, 1): P(k) = ln((k+1)/k) / ln(N+1), about 1/(k ln N). */
const zipfWord = () => vocabulary[Math.min(VOCABULARY, Math.floor((VOCABULARY + 1) ** random())) - 1]!;

function documentPages(index: number): string[] {
  const pages = 1 + Math.floor(random() * 5);
  const texts = Array.from({ length: pages }, () => Array.from({ length: WORDS_PER_PAGE }, zipfWord));
  const plant = (w: string) => {
    const p = texts[Math.floor(random() * pages)]!;
    p[Math.floor(random() * p.length)] = w;
  };
  if (index % 20 === 0) plant("inkwell");
  if (index % 100 === 1) plant("quill");
  return texts.map((t) => t.join(" "));
}

// --- the databases ------------------------------------------------------------------------
const seeded = await seededDatabase(n);
const { orgId, bucketId } = seeded;
const seedName = new URL(seeded.url).pathname.slice(1);
const copyName = `media_bench_text_${Date.now().toString(36)}`;
const copyUrl = new URL(seeded.url);
copyUrl.pathname = `/${copyName}`;
const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
const cleanups: (() => Promise<unknown>)[] = [];
async function cleanup() {
  for (const c of cleanups.splice(0).reverse()) await c().catch((e) => console.error(`[search-text] cleanup: ${e}`));
}
stopOnExit(cleanup);

const loadStart = load1();
const bytes = (x: number) => `${(x / 2 ** 20).toFixed(0)} MiB`;

/** CREATE DATABASE … TEMPLATE needs the seed without other sessions: other scenarios may be on it for a while. */
async function copySeed() {
  const started = performance.now();
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.unsafe(`create database ${copyName} template ${seedName} strategy file_copy`);
      break;
    } catch (e) {
      if ((e as { code?: string }).code !== "55006" || attempt > 360) throw e;
      if (attempt % 12 === 0) console.error(`[search-text] ${seedName} is in use by another session; waiting to copy it...`);
      await Bun.sleep(5000);
    }
  }
  cleanups.push(() => (process.env.BENCH_KEEP_COPY ? Promise.resolve() : admin.unsafe(`drop database if exists ${copyName} with (force)`)));
  return (performance.now() - started) / 1000;
}

interface Fill {
  documents: number;
  pages: number;
  textBytes: number;
  seconds: number;
  vacuumSeconds: number;
  compactSeconds: number;
  before: Sizes;
}

/** The text of every SHARE-th object, written as the worker writes it; timed. */
async function fillText(db: Db): Promise<Fill> {
  const ids = rowsOf<{ id: string }>(
    await db.execute(sql`select id from media_objects where org_id = ${orgId} and bucket_id = ${bucketId} and deleted_at is null and abs(hashtext(id::text || 'text')) % ${SHARE} = 0 order by id`),
  ).map((r) => r.id);
  let pages = 0;
  let textBytes = 0;
  const started = performance.now();
  for (let at = 0; at < ids.length; at += BATCH) {
    const batch = ids.slice(at, at + BATCH);
    const rows: { object_id: string; page: number; text: string }[] = [];
    batch.forEach((id, j) => {
      documentPages(at + j).forEach((text, p) => {
        rows.push({ object_id: id, page: p + 1, text });
        textBytes += text.length;
      });
    });
    pages += rows.length;
    // What storeText does for one object, for a batch: its pages, then its search row rewritten
    // by touchSearch, in one transaction.
    await db.transaction(async (tx) => {
      await tx.execute(sql`
        insert into media_text (object_id, org_id, source, page, text, etag)
        select x.object_id, o.org_id, 'pdf', x.page, x.text, o.etag
        from json_to_recordset(${JSON.stringify(rows)}::json) as x(object_id uuid, page int, text text)
        join media_objects o on o.id = x.object_id`);
      await touchSearch(tx, { search: { external: false } as never }, orgId, batch);
    });
    if ((at / BATCH) % 20 === 0) console.error(`[search-text] text of ${int(at + batch.length)} / ${int(ids.length)} objects, ${((performance.now() - started) / 1000).toFixed(0)} s, load ${load1()}`);
  }
  const seconds = (performance.now() - started) / 1000;
  // Autovacuum's work in production (the GIN index's pending list, the dead row versions).
  const pg = postgres(copyUrl.toString(), { max: 1, onnotice: () => {} });
  try {
    let t = performance.now();
    await pg`vacuum analyze media_search`;
    await pg`analyze media_text`;
    const vacuumSeconds = (performance.now() - t) / 1000;
    const before = await sizes(db);
    t = performance.now();
    if (process.env.BENCH_TEXT_COMPACT !== "0") {
      await pg`set maintenance_work_mem = '512MB'`;
      await pg`vacuum full media_search`;
      await pg`analyze media_search`;
    }
    const compactSeconds = (performance.now() - t) / 1000;
    return { documents: ids.length, pages, textBytes, seconds, vacuumSeconds, compactSeconds, before };
  } finally {
    await pg.end();
  }
}

interface Sizes {
  rows: number;
  index: number;
  heap: number;
  toast: number;
  table: number;
  text: number;
}
async function sizes(db: Db): Promise<Sizes> {
  const [r] = rowsOf<Record<keyof Sizes, string>>(
    await db.execute(sql`
      select (select count(*) from media_search) as rows,
        pg_relation_size('media_search_org_vector_idx') as index,
        pg_relation_size('media_search') as heap,
        coalesce((select pg_total_relation_size(reltoastrelid) from pg_class where oid = 'media_search'::regclass and reltoastrelid <> 0), 0) as toast,
        pg_table_size('media_search') as table,
        pg_total_relation_size('media_text') as text`),
  );
  return Object.fromEntries(Object.entries(r!).map(([k, v]) => [k, Number(v)])) as unknown as Sizes;
}

/**
 * How the documents' search rows are stored: the vector's and the body's sizes in memory and as
 * stored, and which of the two sit out of line in TOAST, read off the row headers of every
 * 20th heap page (pageinspect: a varlena whose first byte is 0x01 is a TOAST pointer).
 */
async function storage(db: Db) {
  const [r] = rowsOf<{ docs: string; stored: string; raw: string; body_stored: string; body_raw: string; plain_stored: string }>(
    await db.execute(sql`
      select count(*) filter (where body <> '') as docs,
        avg(pg_column_size(vector)) filter (where body <> '') as stored,
        avg(pg_column_size(vector || ''::tsvector)) filter (where body <> '') as raw,
        avg(pg_column_size(body)) filter (where body <> '') as body_stored,
        avg(octet_length(body)) filter (where body <> '') as body_raw,
        avg(pg_column_size(vector)) filter (where body = '') as plain_stored
      from media_search`),
  );
  await db.execute(sql`create extension if not exists pageinspect`);
  const [att] = rowsOf<{ vector: number; body: number }>(
    await db.execute(sql`select max(attnum) filter (where attname = 'vector') as vector, max(attnum) filter (where attname = 'body') as body from pg_attribute where attrelid = 'media_search'::regclass and not attisdropped`),
  );
  const [ext] = rowsOf<{ rows: string; docs: string; vector: string; body: string }>(
    await db.execute(sql`
      with d as (
        select tuple_data_split('media_search'::regclass, t_data, t_infomask, t_infomask2, t_bits) as d
        from generate_series(0, (pg_relation_size('media_search') / 8192 - 1)::int, 20) b, heap_page_items(get_raw_page('media_search', b)) where t_data is not null)
      select count(*) as rows, count(*) filter (where octet_length(d[${att!.body}]) > 8) as docs,
        count(*) filter (where get_byte(d[${att!.vector}], 0) = 1) as vector,
        count(*) filter (where get_byte(d[${att!.body}], 0) = 1) as body
      from d`),
  );
  return {
    docs: Number(r!.docs),
    stored: Number(r!.stored),
    raw: Number(r!.raw),
    bodyStored: Number(r!.body_stored),
    bodyRaw: Number(r!.body_raw),
    plainStored: Number(r!.plain_stored),
    sampledDocs: Number(ext!.docs),
    vectorOut: Number(ext!.vector),
    bodyOut: Number(ext!.body),
  };
}

const JWT_SECRET = "bench-secret-bench-secret";
async function server(tag: string, url: string) {
  const prefix = `mbench-search-text-${tag}-${Date.now()}`;
  const dataDir = join(import.meta.dir, ".work", prefix);
  mkdirSync(dataDir, { recursive: true });
  const app = await startTarget({
    mode: "app",
    env: { DATABASE_URL: url, REDIS_URL, REDIS_PREFIX: prefix, JWT_SECRET, LOG_LEVEL: "error", DATA_DIR: dataDir, STORAGE_PORT: "0", RATE_LIMIT_PER_MINUTE: "100000000", ORG_SEARCH_MS_PER_SECOND: "0" },
  });
  cleanups.push(async () => {
    await app.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await deleteRedisPrefix(prefix);
  });
  return app;
}

const queries = [
  { label: "mid (1% of objects, in the name)", q: "mid", target: true },
  { label: "inkwell (text only, 1% of objects)", q: "inkwell" },
  { label: "quill (text only, 1% of documents)", q: "quill" },
  { label: "common (50%, in the name)", q: "common", few: true },
] as { label: string; q: string; target?: boolean; few?: boolean }[];

interface Side {
  name: string;
  app: { url: string };
  direct: PostgresSearch;
  db: Db;
}

/** Every query on both sides, alternating request by request (HTTP, then the same SQL direct); rows of the results table and each query's p95s. */
async function measure(sides: Side[], headers: Record<string, string>) {
  const rows: string[] = [];
  const summary: Record<string, { http: number; sql: number }[]> = {};
  for (const { label, q, target = false, few = false } of queries) {
    const runs = few ? Math.min(iterations, 50) : iterations;
    const req = { orgId, query: parseQuery(q), bucketId: null, kind: null, tagIds: [], categoryGroups: [], sizeMin: null, sizeMax: null, dateFrom: null, dateBefore: null, limit: 50, offset: 0, exactUpTo: 10_000 };
    const t = sides.map(() => ({ http: [] as number[], sql: [] as number[], matches: [] as number[], total: "0", inText: 0 }));
    const loadBefore = load1();
    for (let i = -3; i < runs; i++) {
      // Which database goes first alternates, so neither always meets the other's warm caches.
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const k of order) {
        const s = performance.now();
        const res = await fetch(`${sides[k]!.app.url}/api/search?q=${encodeURIComponent(q)}&limit=50`, { headers });
        const body = (await res.json()) as { total: number; totalRelation: "eq" | "gte"; facets?: unknown; matches?: { in: string[] }[] };
        // A warm-up search may find the tables out of the cache and pass the search deadline.
        if (res.status === 503 && i < 0) continue;
        if (res.status !== 200 || !body.facets) throw new Error(`search answered ${res.status} (${sides[k]!.name})`);
        const http = performance.now() - s;
        t[k]!.total = `${int(body.total)}${body.totalRelation === "gte" ? "+" : ""}`;
        t[k]!.inText = (body.matches ?? []).filter((m) => m.in.includes("text")).length;
        if (i >= 0) t[k]!.http.push(http);
      }
      for (const k of order) {
        let s = performance.now();
        const hits = await sides[k]!.direct.search(req);
        if (i >= 0) t[k]!.sql.push(performance.now() - s);
        // The snippets' share: the statement that reads where each result matched, alone.
        s = performance.now();
        await matchesOf(sides[k]!.db, orgId, req.query, hits.ids);
        if (i >= 0) t[k]!.matches.push(performance.now() - s);
      }
    }
    const load = `${loadBefore}-${load1()}`;
    summary[q] = [];
    sides.forEach((side, k) => {
      const h = percentiles(t[k]!.http);
      const d = percentiles(t[k]!.sql);
      const m = percentiles(t[k]!.matches);
      summary[q]!.push({ http: h.p95, sql: d.p95 });
      process.stderr.write(`${label} ${side.name}: ${t[k]!.total} matches, HTTP p50 ${ms(h.p50)} p95 ${ms(h.p95)}; SQL p50 ${ms(d.p50)} p95 ${ms(d.p95)}, matches p50 ${ms(m.p50)}; load ${load}\n`);
      rows.push(
        `| ${k === 0 ? `${label}${target ? " (target)" : ""}` : ""} | ${side.name} | ${t[k]!.total} | ${t[k]!.inText} | ${runs} | ${ms(h.p50)} / **${ms(h.p95)}** / ${ms(h.p99)} | ${ms(d.p50)} / ${ms(d.p95)} / ${ms(d.p99)} | ${ms(m.p50)} / ${ms(m.p95)} | ${k === 0 ? load : ""} |`,
      );
    });
    const [a, b] = summary[q]!;
    rows.push(`| | *with / without, p95* | | | | *${(b!.http / a!.http).toFixed(2)}x* | *${(b!.sql / a!.sql).toFixed(2)}x* | | |`);
  }
  return { rows, summary };
}

/**
 * The part of a search that TOAST can slow: every match ranked (as the statement's `seen` does),
 * explained with its buffers. Returns one line per word and database; the plans go to stderr.
 */
async function explainRanking(sides: Side[]) {
  const lines: string[] = [];
  for (const q of ["mid", "inkwell"]) {
    for (const side of sides) {
      const plan = rowsOf<{ "QUERY PLAN": string }>(
        await side.db.execute(sql`
          explain (analyze, buffers)
          select count(*), sum(ts_rank(s.vector, q.tsq, 32)) from (select plainto_tsquery('simple', ${q}) as tsq) q, media_search s
          where s.vector @@ q.tsq and s.org_id = ${orgId}`),
      ).map((r) => r["QUERY PLAN"]);
      process.stderr.write(`--- ranking every match of "${q}", ${side.name}:\n${plan.join("\n")}\n`);
      const time = /Execution Time: ([\d.]+)/.exec(plan.join("\n"))?.[1] ?? "?";
      const buffers = /Buffers: (.*)/.exec(plan[1] ?? plan[0] ?? "")?.[1] ?? plan.find((l) => l.includes("Buffers:"))?.trim() ?? "?";
      lines.push(`| ${q} | ${side.name} | ${time} | ${buffers} |`);
    }
  }
  return ["| word | database | every match ranked, execution (ms) | buffers |", "|---|---|---:|---|", ...lines];
}

/**
 * The columns kept in the row in the second pass. The vector alone is not enough: once it stays,
 * the row is still over the toaster's 2 kB target, and the toaster then moves every other
 * EXTENDED value larger than a TOAST pointer out (key, labels, metadata, the tag and category
 * arrays), which the facets then read from TOAST (bench/notes/2026-11-29-search-text.md).
 */
const ROW_KEPT = ["vector", "key", "labels", "meta", "tag_ids", "category_ids"];

const TABLE_HEAD = [
  "| query | database | matches (total answered) | of the page's 50, matched in the text | requests | HTTP p50 / p95 / p99 (ms) | same SQL direct p50 / p95 / p99 (ms) | of which where they matched (snippets) alone, p50 / p95 (ms) | load |",
  "|---|---|---:|---:|---:|---|---|---|---|",
];

try {
  console.error(`[search-text] copying ${seedName} to ${copyName}...`);
  const copySeconds = await copySeed();
  const plainDb = await openDatabase({ url: seeded.url, dataDir: "unused" });
  cleanups.push(() => plainDb.close());
  const textDb = await openDatabase({ url: copyUrl.toString(), dataDir: "unused" });
  cleanups.push(() => textDb.close());
  // The first pass is the storage before migration 0028 (every column EXTENDED), which the
  // migration's choice is measured against in the second.
  await textDb.db.execute(sql.raw(`alter table media_search ${ROW_KEPT.map((c) => `alter column ${c} set storage extended`).join(", ")}`));
  const loadFill = load1();
  const fill = await fillText(textDb.db);
  console.error(`[search-text] text of ${int(fill.documents)} objects in ${fill.seconds.toFixed(0)} s; vacuum ${fill.vacuumSeconds.toFixed(0)} s, compaction ${fill.compactSeconds.toFixed(0)} s`);
  const loadFilled = load1();
  const sizePlain = await sizes(plainDb.db);
  const sizeText = await sizes(textDb.db);
  const stored = await storage(textDb.db);
  console.error(`[search-text] sizes ${JSON.stringify({ sizePlain, sizeText, stored })}`);

  const plainApp = await server("plain", seeded.url);
  const textApp = await server("text", copyUrl.toString());
  const jwt = await new SignJWT({ sub: crypto.randomUUID(), org_id: orgId }).setProtectedHeader({ alg: "HS256" }).setExpirationTime("3h").sign(new TextEncoder().encode(JWT_SECRET));
  const headers = { authorization: `Bearer ${jwt}` };
  const plainSide = { name: "without text", app: plainApp, direct: new PostgresSearch(plainDb.db), db: plainDb.db };
  const textSide = { name: "with text", app: textApp, direct: new PostgresSearch(textDb.db), db: textDb.db };
  const first = await measure([plainSide, textSide], headers);
  const firstRanking = await explainRanking([plainSide, textSide]);

  // The same copy with the documents' vectors kept in the row: the vector and the small columns
  // a search reads MAIN, so the toaster moves only the body (which no search reads) out; applied
  // to the existing rows by a rewrite.
  const t = performance.now();
  {
    const pg = postgres(copyUrl.toString(), { max: 1, onnotice: () => {} });
    await pg.unsafe(`alter table media_search ${ROW_KEPT.map((c) => `alter column ${c} set storage main`).join(", ")}`);
    await pg`set maintenance_work_mem = '512MB'`;
    await pg`vacuum full media_search`;
    await pg`analyze media_search`;
    await pg.end();
  }
  const rewriteSeconds = (performance.now() - t) / 1000;
  const sizeMain = await sizes(textDb.db);
  const storedMain = await storage(textDb.db);
  console.error(`[search-text] vector in the row: ${JSON.stringify({ sizeMain, storedMain })}, rewrite ${rewriteSeconds.toFixed(0)} s`);
  const mainSide = { name: "with text, vector in the row", app: textApp, direct: new PostgresSearch(textDb.db), db: textDb.db };
  const second = await measure([plainSide, mainSide], headers);
  const secondRanking = await explainRanking([plainSide, mainSide]);

  const loadEnd = load1();
  const rss = { plain: rssMiB(plainApp.pid), text: rssMiB(textApp.pid) };
  const [v] = rowsOf<{ pg: string }>(await plainDb.db.execute(sql`select current_setting('server_version') as pg`));
  const perMillion = (x: number, s: Sizes) => bytes((x * 1_000_000) / s.rows);
  const sizeRow = (label: string, f: (s: Sizes) => number) =>
    `| ${label} | ${perMillion(f(sizePlain), sizePlain)} | ${perMillion(f(fill.before), fill.before)} | ${perMillion(f(sizeText), sizeText)} | ${f(sizePlain) < 2 ** 20 ? "—" : `${(f(sizeText) / sizeText.rows / (f(sizePlain) / sizePlain.rows)).toFixed(2)}x`} | ${perMillion(f(sizeMain), sizeMain)} |`;
  const out = (x: { sampledDocs: number; vectorOut: number; bodyOut: number }) =>
    `of the documents' rows on every 20th heap page (${int(x.sampledDocs)}), ${((100 * x.vectorOut) / x.sampledDocs).toFixed(0)}% have their vector in TOAST and ${((100 * x.bodyOut) / x.sampledDocs).toFixed(0)}% their body`;
  const mid = first.summary.mid!;
  const met = mid[1]!.http <= 30;
  const section = [
    "## search-text — full text over 1,000,000 objects, 20% of them with the text inside them",
    "",
    `\`npm run bench -- search-text\`. bench/_seed.ts's ${int(n)} objects (its reusable database, \`${seedName}\`) against a copy`,
    `of that database in which ${int(fill.documents)} objects (${((100 * fill.documents) / sizePlain.rows).toFixed(1)}%, by a hash of the id) are PDFs whose text was read:`,
    `${int(fill.pages)} pages of ${WORDS_PER_PAGE} words (1-5 per document, ${(fill.pages / fill.documents).toFixed(2)} on average; ${bytes(fill.textBytes)} of text), words drawn by Zipf's law from a`,
    `made-up vocabulary of ${int(VOCABULARY)} words that holds none of the queried ones, written as the worker writes them (media_text`,
    "rows, then the search row rewritten by `touchSearch`, 1,000 objects per transaction). \"inkwell\" is planted in every 20th",
    "document and \"quill\" in every 100th; nothing else holds either. The copy is then compacted (VACUUM FULL), as the bulk-seeded",
    "original is. Each query alternates between the two databases request by request: `GET /api/search?q=…&limit=50` on a",
    "server of each (own processes, a dashboard JWT; the answer includes `matches` with the text snippets), and the same",
    "SQL called directly (`PostgresSearch.search`, which reads the snippets too).",
    "",
    `Date ${machine({ pg: v!.pg, redis: "7" }).replace(", Redis 7, wrk 4.1.0", "")}. Load average (1 min): ${loadStart} at the start,`,
    `${loadFill} before the text fill, ${loadFilled} after it, ${loadEnd} at the end; each query's row gives the load during it (a machine shared`,
    "with other work: compare within this run only).",
    "",
    ...TABLE_HEAD,
    ...first.rows,
    "",
    "Sizes per million objects (the full-text index, media_search with its TOAST, media_text): without text; with it as the",
    "fill and a vacuum left it; compacted (what the searches above ran on); and with the vector kept in the row (below):",
    "",
    "| relation | without text | with text, as written | with text, compacted | compacted / without | vector in the row |",
    "|---|---:|---:|---:|---:|---:|",
    sizeRow("full-text index (media_search_org_vector_idx)", (s) => s.index),
    sizeRow("media_search heap", (s) => s.heap),
    sizeRow("media_search TOAST (with its index)", (s) => s.toast),
    sizeRow("media_search, TOAST included (pg_table_size)", (s) => s.table),
    `| media_text (indexes included) | ${perMillion(sizePlain.text, sizePlain)} | ${perMillion(fill.before.text, fill.before)} | ${perMillion(sizeText.text, sizeText)} | | ${perMillion(sizeMain.text, sizeMain)} |`,
    "",
    `Storage of the documents' search rows: the vector ${stored.raw.toFixed(0)} bytes in memory, ${stored.stored.toFixed(0)} as stored (pglz gains nothing on it; an object`,
    `without text: ${stored.plainStored.toFixed(0)} bytes); the body ${stored.bodyRaw.toFixed(0)} bytes, ${stored.bodyStored.toFixed(0)} as stored. As PostgreSQL places them by default,`,
    `${out(stored)}: ranking or matching a document reads its vector from TOAST, while its body, which no search reads, stays in the row.`,
    "",
    `Write cost: the text of ${int(fill.documents)} objects in ${fill.seconds.toFixed(0)} s (${int(fill.documents / fill.seconds)} objects/s, ${((1000 * fill.seconds) / fill.documents).toFixed(2)} ms each, batched),`,
    `then VACUUM ANALYZE ${fill.vacuumSeconds.toFixed(0)} s and VACUUM FULL ${fill.compactSeconds.toFixed(0)} s; copying the database took ${copySeconds.toFixed(0)} s.`,
    `Server RSS after the searches: ${rss.plain.toFixed(0)} MiB without text, ${rss.text.toFixed(0)} MiB with it.`,
    "",
    "The ranking alone (EXPLAIN ANALYZE of `count(*)` and `ts_rank` over every match, as the search's first step does; the",
    "first buffers figure of the plan's top node):",
    "",
    ...firstRanking,
    "",
    `Target (the 1% term, with text): HTTP p95 <= 30 ms — **${met ? "met" : "missed"}** (${ms(mid[1]!.http)} ms; without text ${ms(mid[0]!.http)} ms in the same run).`,
    "",
    "### The vector kept in the row",
    "",
    `The same copy after \`ALTER TABLE media_search\` ${ROW_KEPT.map((c) => `\`${c}\``).join(", ")} \`SET STORAGE MAIN\` (compressed if it helps,`,
    "out of the row only when the row cannot hold it, about 8 kB; the body, the one column left EXTENDED, is the only one moved",
    `out) and a rewrite of the existing rows (VACUUM FULL, ${rewriteSeconds.toFixed(0)} s): ${out(storedMain)}. Measured again against the`,
    "database without text, the same way, after the run above:",
    "",
    ...TABLE_HEAD,
    ...second.rows,
    "",
    ...secondRanking,
  ].join("\n");
  process.stdout.write(`${section}\n`);
  if (!process.env.BENCH_NO_WRITE) writeSection("search-text", section);
} finally {
  await cleanup();
  await admin.end();
}
