import { type SQL, sql } from "drizzle-orm";
import { type Db, rowsOf } from "../db/client.ts";
import type { Clause, ParsedQuery } from "../domain/search/query.ts";
import type { Facets, SearchMatch } from "../contract/search.ts";
import { MARK_START, MARK_STOP, markedSnippet } from "../domain/search/snippet.ts";
import { FACET_LIMIT, type SearchBackend, type SearchHits, type SearchRequest } from "../domain/ports/search.ts";
import { factsCondition } from "../domain/derivatives/facts.ts";
import { executeKept } from "../domain/core/prepared.ts";

/** Same separators the generated vector replaces (db/schema/search.ts). */
const normalize = (text: string) => text.replace(/[/._-]+/g, " ");

/** A prefix term as tsquery text: its words in sequence, the last one a prefix. */
function prefixQuery(text: string): string {
  const words = normalize(text).match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.map((w, i) => `'${w.toLowerCase()}'${i === words.length - 1 ? ":*" : ""}`).join(" <-> ");
}

/**
 * Turns a parsed query into a tsquery expression. Postgres tokenizes every piece with the
 * same 'simple' configuration as the documents, so query and document words always agree;
 * all user text travels as parameters.
 */
export function tsQuery(q: ParsedQuery): SQL {
  const one = (c: Clause): SQL => {
    switch (c.type) {
      case "term":
        return c.prefix ? sql`to_tsquery('simple', ${prefixQuery(c.text)})` : sql`plainto_tsquery('simple', ${normalize(c.text)})`;
      case "phrase":
        return sql`phraseto_tsquery('simple', ${normalize(c.text)})`;
      case "not":
        return sql`(!! ${one(c.clause)})`;
      case "or":
        return sql`(${sql.join(c.clauses.map(one), sql` || `)})`;
    }
  };
  return sql.join(q.clauses.map(one), sql` && `);
}

/** Any positive word or phrase of the query (negations left out): what makes a field a match. */
export function anyTsQuery(q: ParsedQuery): SQL | null {
  const positive = q.clauses.flatMap((c) => (c.type === "not" ? [] : c.type === "or" ? c.clauses.filter((x) => x.type !== "not") : [c]));
  return positive.length ? tsQuery({ clauses: [{ type: "or", clauses: positive }] }) : null;
}

const SEPARATORS = sql.raw(`'[/._\\-]+'`);
/** ts_headline's options: a fragment or two of up to 24 words around the matches, marked for markedSnippet. */
const HEADLINE = `StartSel=${MARK_START}, StopSel=${MARK_STOP}, MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "`;

/**
 * Where each object of a page matched: which of its fields hold a query word, and for the
 * text inside it, the best matching page (PDFs name it) with a marked snippet; a metadata match
 * gets a snippet of the values. One statement for the page, after the search, so the search's
 * own cost does not change. Which fields matched is read off the stored vector by weight (A the
 * name, B the labels, C the metadata, D the text), not by parsing each field again, and an
 * object's pages are only read when its text matched: the page of 100 results cost PostgreSQL
 * about as much again as the search itself when every field was parsed per result.
 */
export async function matchesOf(db: Db, orgId: string, query: ParsedQuery, ids: string[]): Promise<SearchMatch[]> {
  const any = anyTsQuery(query);
  if (!any || ids.length === 0) return [];
  const rows = rowsOf<{ id: string; name: boolean; tags: boolean; metadata: boolean; page: number | null; source: string | null; text_snippet: string | null; meta_snippet: string | null }>(
    await db.execute(sql`
      with q as materialized (select ${any} as tsq)
      select s.object_id as id,
        ts_filter(s.vector, '{a}') @@ q.tsq as name,
        ts_filter(s.vector, '{b}') @@ q.tsq as tags,
        ts_filter(s.vector, '{c}') @@ q.tsq as metadata,
        t.page, t.source,
        case when t.text is not null then ts_headline('simple', t.text, q.tsq, ${HEADLINE}) end as text_snippet,
        case when t.text is null and ts_filter(s.vector, '{c}') @@ q.tsq
          then ts_headline('simple', regexp_replace(s.meta, ${SEPARATORS}, ' ', 'g'), q.tsq, ${HEADLINE}) end as meta_snippet
      from q, media_search s
      left join lateral (
        select x.page, x.source, x.text from media_text x
         where ts_filter(s.vector, '{d}') @@ q.tsq
           and x.object_id = s.object_id and to_tsvector('simple', x.text) @@ q.tsq
         order by ts_rank(to_tsvector('simple', x.text), q.tsq) desc, x.page limit 1
      ) t on true
      where s.org_id = ${orgId} and s.object_id in (${sql.join(ids.map((id) => sql`${id}::uuid`), sql`, `)})`),
  );
  return rows.map((r) => {
    const fields: SearchMatch["in"] = [];
    if (r.name) fields.push("name");
    if (r.tags) fields.push("tags");
    if (r.metadata) fields.push("metadata");
    if (r.page !== null) fields.push("text");
    const raw = r.text_snippet ?? r.meta_snippet;
    return { id: r.id, in: fields, page: r.source === "pdf" ? r.page : null, snippet: raw ? markedSnippet(raw) : null };
  });
}

/**
 * How `seen` finds the first matches. The GIN index answers with a bitmap of every match,
 * built whole before the first row comes out: for a term in half of a million objects that
 * bitmap alone costs more than the rest of the search. A scan of the organization's rows
 * with the match as a plain function (`ts_match_vq`, which no index serves) stops as soon as
 * it has enough, so for a common term it reads about limit / frequency rows. A probe of the
 * first PROBE_ROWS rows in the same statement estimates the frequency; both branches are
 * planned and a one-time filter runs one. They find the same matches (both read the table
 * in physical order), so the choice changes the cost, never the answer; a probe that guesses
 * wrong (a term common among the first rows only) costs a scan of the organization.
 */
// 500 rather than 2,000: the probe was a quarter of a search's execution for a term in 500 of
// 50,000 objects (bench/notes/2026-11-28-seventh-sitting.md). At 500 rows a term in 2% of
// objects is expected 10 times (the line at 25 is 4.8 standard deviations above) and one in
// 10% 50 times (3.7 below); a guess wrong near 5% costs time, never the answer.
const PROBE_ROWS = 500;
/** 5% of the probe: the scan then reads at most 20x the limit to fill it. */
const PROBE_SCAN_FROM = 25;

const uuidArray = (ids: string[]) => sql`array[${sql.join(ids.map((id) => sql`${id}`), sql`, `)}]::uuid[]`;

/**
 * The default backend: PostgreSQL full text over `media_search` (a GIN index over org_id and
 * the vector, so the organization's matches come from the index alone), which also holds
 * every field a search filters and counts on, ranked by relevance then recency. One statement
 * computes the page, the total and the facets over the match set (up to `exactUpTo` matches),
 * reading no other table per match.
 *
 * Common shapes of the statement are kept prepared on the connection (keptShape), others are
 * sent unnamed; PostgreSQL plans both per call. `q` is materialized all the same, in case it
 * switches a kept statement to a generic plan: there an inlined `q` re-parsed the query text
 * for every matching row (the match scan 15 -> 35 ms for 10,000 matches;
 * bench/notes/2026-11-22-profiles-and-fixes.md, search). Ranking is `ts_rank` (term frequency
 * with the A/B/C weights of key, labels and metadata) rather than `ts_rank_cd` (cover
 * density): on texts this short they order alike, and cover density cost a quarter of the
 * statement.
 */
export class PostgresSearch implements SearchBackend {
  readonly name = "postgres" as const;
  readonly external = false;

  /** `timeoutMs`: the search statement's own statement_timeout (0: the pool's); PostgreSQL only. */
  constructor(
    private readonly db: Db,
    private readonly timeoutMs = 0,
  ) {}

  async search(req: SearchRequest): Promise<SearchHits> {
    const filters: SQL[] = [sql`s.org_id = ${req.orgId}`];
    if (req.bucketId) filters.push(sql`s.bucket_id = ${req.bucketId}`);
    if (req.kind) filters.push(sql`s.kind = ${req.kind}`);
    if (req.sizeMin !== null) filters.push(sql`s.size >= ${req.sizeMin}`);
    if (req.sizeMax !== null) filters.push(sql`s.size <= ${req.sizeMax}`);
    if (req.dateFrom) filters.push(sql`s.created_at >= ${req.dateFrom.toISOString()}`);
    if (req.dateBefore) filters.push(sql`s.created_at < ${req.dateBefore.toISOString()}`);
    if (req.tagIds.length) filters.push(sql`s.tag_ids @> ${uuidArray(req.tagIds)}`);
    for (const group of req.categoryGroups) filters.push(sql`s.category_ids && ${uuidArray(group)}`);
    if (req.facts) filters.push(factsCondition(req.facts, sql`s.object_id`, sql`(select o.etag from media_objects o where o.id = s.object_id)`));
    const where = sql.join(filters, sql` and `);
    const exactUpTo = Math.trunc(req.exactUpTo);
    // `seen` takes one match past the limit, in whatever order the index yields them, and stops:
    // the work is bounded by the limit, not by how many objects match. Up to the limit `m` is
    // every match and the answer is exact; past it, rank, total and facets cover the first
    // `exactUpTo` matches found, and the answer says so. `m` is read where it is used (the first
    // `exactUpTo` rows of `seen`, in the same order each time) rather than copied: at 1,000,000
    // objects the 1% term's statement took p50 / p95 42.2 / 63.2 ms with the copy and 37.8 / 52.0
    // without (100 runs each, alternating; bench/notes/2026-11-30-search-1m.md).
    const statement = sql`
      with q as materialized (select ${tsQuery(req.query)} as tsq),
      probe as materialized (
        select count(*) filter (where ts_match_vq(x.vector, q.tsq)) as hits
        from q, (select s.vector from media_search s where ${where} limit ${sql.raw(String(PROBE_ROWS))}) x
      ),
      seen as materialized (
        (select s.object_id as id, s.kind, s.created_at, s.tag_ids, s.category_ids, ts_rank(s.vector, q.tsq, 32) as rank
           from q, media_search s
          where s.vector @@ q.tsq and ${where} and (select hits from probe) < ${sql.raw(String(PROBE_SCAN_FROM))}
          limit ${sql.raw(String(exactUpTo + 1))})
        union all
        (select s.object_id as id, s.kind, s.created_at, s.tag_ids, s.category_ids, ts_rank(s.vector, q.tsq, 32) as rank
           from q, media_search s
          where ts_match_vq(s.vector, q.tsq) and ${where} and (select hits from probe) >= ${sql.raw(String(PROBE_SCAN_FROM))}
          limit ${sql.raw(String(exactUpTo + 1))})
      ),
      m as not materialized (select * from seen limit ${sql.raw(String(exactUpTo))})
      select
        (select count(*) from seen)::int as seen,
        (select coalesce(json_agg(p.id), '[]'::json) from (select id from m order by rank desc, created_at desc, id limit ${req.limit} offset ${req.offset}) p) as ids,
        (select coalesce(json_agg(json_build_object('kind', k.kind, 'count', k.n)), '[]'::json)
           from (select kind, count(*)::int as n from m group by kind order by n desc, kind) k) as kinds,
        (select coalesce(json_agg(json_build_object('slug', t.slug, 'name', t.name, 'count', f.n) order by f.n desc, t.slug), '[]'::json)
           from (select tag_id, count(*)::int as n from (select unnest(tag_ids) as tag_id from m) u group by tag_id order by n desc limit ${sql.raw(String(FACET_LIMIT))}) f
           join tags t on t.id = f.tag_id) as tags,
        (select coalesce(json_agg(json_build_object('slug', c.slug, 'name', c.name, 'count', f.n) order by f.n desc, c.slug), '[]'::json)
           from (select category_id, count(*)::int as n from (select unnest(category_ids) as category_id from m) u group by category_id order by n desc limit ${sql.raw(String(FACET_LIMIT))}) f
           join categories c on c.id = f.category_id) as categories
    `;
    // A search is the one statement whose cost a caller steers (the match set, prefixes): it gets
    // a tighter deadline than the pool's, set for its own transaction only.
    const kept = keptShape(req);
    const run = (db: Db) => (kept ? executeKept(db, statement) : db.execute(statement));
    // A replica's search pool carries the search deadline on its connections, as the primary's does.
    const result = req.replica
      ? await run(req.replica)
      : this.timeoutMs
        ? await this.db.transaction(async (tx) => {
            await tx.execute(sql`select set_config('statement_timeout', ${String(this.timeoutMs)}, true)`);
            return run(tx);
          })
        : await run(this.db);
    const [row] = rowsOf<{ seen: number; ids: string[]; kinds: Facets["kinds"]; tags: Facets["tags"]; categories: Facets["categories"] }>(result);
    const capped = row!.seen > req.exactUpTo;
    const matches = await matchesOf(req.replica ?? this.db, req.orgId, req.query, row!.ids);
    return {
      matches,
      ids: row!.ids,
      total: capped ? req.exactUpTo : row!.seen,
      totalRelation: capped ? "gte" : "eq",
      facets: { tags: row!.tags, categories: row!.categories, kinds: row!.kinds },
      facetsApproximate: capped,
    };
  }
}

/**
 * Whether the statement of this search is kept prepared on its connection (its text follows
 * the query's clauses and filters; the values travel as parameters, the constants are written
 * in). Kept, PostgreSQL parses it once per connection instead of on every call: its CPU per
 * search of a term in 500 of 50,000 objects went from 4.7 to 4.2 ms and from 5.5 to 4.9 ms in
 * two alternating pairs of runs (bench/notes/2026-11-28-eighth-sitting.md). It still plans it
 * per call: a generic plan forced for the search pool saved about 0.1 ms more, not worth a
 * setting.
 * Only common shapes are kept, since every distinct text is a statement each pooled
 * connection keeps (about 330 KB in PostgreSQL): one or two words or prefixes, filtered by
 * bucket, kind, both or neither, at most 24 texts (about 8 MB per connection).
 */
function keptShape(req: SearchRequest): boolean {
  const words = req.query.clauses.length <= 2 && req.query.clauses.every((c) => c.type === "term");
  const otherFilters =
    req.tagIds.length > 0 || req.categoryGroups.length > 0 || req.sizeMin !== null || req.sizeMax !== null || req.dateFrom !== null || req.dateBefore !== null || Boolean(req.facts);
  return words && !otherFilters;
}
