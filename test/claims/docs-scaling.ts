import { expect } from "bun:test";
import { DEFAULT_LIMIT, MAX_LIMIT } from "../../contract/common.ts";
import { MEDIA_SORTS } from "../../domain/media/media.ts";
import type { PageClaims } from "./claim.ts";
import { defaults } from "../support/claim-checks.ts";

const PEER = "measured by npm run bench -- peer under wrk on a shared 2-vCPU machine (the run of 2026-11-28 06:59, quoted in bench/notes/2026-11-29-summary-tables.md); CPU per request on one machine, not a bound the service holds";
const EIGHTH = "measured with PostgreSQL's processes summed under wrk (bench/notes/2026-11-28-eighth-sitting.md); a measurement, not a bound";
const GROWTH = "measured by npm run bench -- growth (an earlier run than bench/results/growth.md): sequential p50 / p95 at load 6.5-8.8, a measurement on one machine";
const SEARCH = "measured by npm run bench -- search (bench/results/search.md); a measurement on one machine";

export default {
  page: "docs/scaling.md",
  claims: [
    {
      says: "Each instance keeps a pool of 10 PostgreSQL connections and 5 more for searches (db/client.ts);",
      by: { file: "test/integration/postgres-round-trips.test.ts", test: "a pool of 10 PostgreSQL connections, and 5 more for searches" },
    },
    {
      says: "20 instances are 300 connections,",
      check: async () => {
        // The arithmetic on the pools above, so a change of either size shows here.
        expect(20 * (10 + 5)).toBe(300);
      },
    },
    {
      says: "the hot ones and the listing's first pages (at most 48 listing statements",
      check: async () => {
        // One statement per sort, order and scope (bucket or not), for each first-page size
        // written into the SQL (the default, the console's 100, the maximum) and one with parameters.
        const firstPages = new Set([DEFAULT_LIMIT, 100, MAX_LIMIT]).size;
        expect(MEDIA_SORTS.length * 2 * 2 * (firstPages + 1)).toBe(48);
      },
    },
    { says: "content), up to 16 MiB per database.", by: { file: "test/integration/view-cache.test.ts", test: "past the byte bound the least recently used go first" } },
    { says: "The unfiltered listing, a key search asked again and a search's page read their page's row versions", by: { file: "test/integration/view-cache.test.ts", test: "every change to a view's rows is in the next listing" } },
    { says: "a search's page none of whose views is kept is written in one statement with its versions", by: { file: "test/integration/view-cache.test.ts", test: "every view written with its version, in one statement, and kept" } },
    { says: "every PostgreSQL search reads up to 10,000 index rows on the primary.", by: { file: "test/integration/search-exact-limit.test.ts", test: "10,000 matches: exact; one more: a lower bound of 10,000" } },
    { says: "every PostgreSQL search reads up to 10,000 index rows on the primary.", check: defaults({ SEARCH_EXACT_LIMIT: 10_000 }) },
    {
      says: "across a commit flush for downloads (egress events are written in batches every 250 ms and folded every 2 s, docs/billing.md)",
      check: async (server) => {
        expect([server.services.deps.egress!.intervalMs, server.services.rollup.intervalMs]).toEqual([250, 2_000]);
      },
    },
    { says: "(default 1000 ms) behind the primary.", check: defaults({ DB_READ_MAX_LAG_MS: 1000 }) },
    {
      says: "A replica serves reads only while it is at most DB_READ_MAX_LAG_MS (default 1000 ms) behind the primary.",
      by: { file: "test/integration/read-replicas.test.ts", test: "a replica further behind than DB_READ_MAX_LAG_MS serves nothing: reads fall back to the primary" },
    },
    {
      says: "a replica that falls further behind, stops replaying or is down serves nothing, and its reads fall back to the primary until it has caught up.",
      by: { file: "test/integration/read-replicas.test.ts", test: "a replica that is down serves nothing: reads fall back to the primary, and it serves again once back" },
    },
    {
      says: "A read that finds a replica gone takes it out at once; that one read fails, the next go to the primary.",
      by: { file: "test/integration/read-replicas.test.ts", test: "a read that finds the replica gone takes it out at once, without waiting for the next check" },
    },
    {
      says: "After a call that changes something, the organization's reads stay on the primary for DB_READ_MAX_LAG_MS;",
      by: { file: "test/integration/read-replicas.test.ts", test: "a caller reads its own writes at once, while the replica is still paused" },
    },
    {
      says: "A download URL keeps the organization's usage report (which counts its egress) on the primary the same way, and nothing else.",
      by: { file: "test/integration/read-replicas.test.ts", test: "a download URL keeps its organization's usage report on the primary, and nothing else" },
    },
    {
      says: "lists and gets of objects, buckets and tags, searches on the PostgreSQL backend and usage reports read from a replica;",
      by: { file: "test/integration/read-replicas.test.ts", test: "lists, gets, searches and usage are served by the replica" },
    },
    {
      says: "(DATABASE_READ_URL: one or more PostgreSQL streaming replicas, comma-separated)",
      by: { file: "test/integration/read-replicas-several.test.ts", test: "each replica up serves, the one down serves nothing, and an organization keeps to one replica" },
    },
    {
      says: "An organization keeps to one replica while that replica serves, so its reads never step back in time between two replicas that lag differently.",
      by: { file: "test/integration/read-replicas-several.test.ts", test: "each replica up serves, the one down serves nothing, and an organization keeps to one replica" },
    },
    {
      says: "holds the BullMQ queues and the per-organization job counts, and every API instance and worker must name the same one; rate limits, idempotency keys and the credential cache stay on REDIS_URL.",
      by: { file: "test/integration/queue-redis.test.ts", test: "jobs run through the queue Redis; the guards stay on REDIS_URL's" },
    },
  ],
  notPromises: [
    { says: "page of 100 then cost PostgreSQL 0.24 ms instead of 0.92", why: "measured by npm run bench -- peer --loaded (bench/notes/2026-11-30-kept-views.md); a measurement on one machine" },
    { says: "so they are short: an object's view takes about 0.2 ms to read", why: "measured by npx bun bench/pglite-calls.ts (bench/results/pglite-calls.md, 176 µs per call); a measurement on one machine" },
    { says: "| signed download URL (egress recorded) | 0.33 ms | 3,000/s |", why: PEER },
    { says: "| object metadata | 0.19 ms | 5,000/s |", why: PEER },
    { says: "| signed upload URL (quota reserved) | 0.44 ms | 2,300/s |", why: PEER },
    { says: "| list, first 100 objects with total, labels, thumbnails | 1.5 ms | 650/s |", why: PEER },
    { says: "| search, 100 of 500 matches, ranked, with total and facets | 3.3 ms | 300/s |", why: PEER },
    { says: "a list of 100 costs PostgreSQL 0.7 ms beside the API's 1.5, and a search of 500 matches 3.9 ms beside 3.3:", why: EIGHTH },
    { says: "row, the list cost PostgreSQL 3.5 ms and the search 11 ms, on a slower machine.)", why: `${EIGHTH}, the run before labels moved onto the object's row` },
    { says: "| 1,000,000 objects, 1 organization | 15 / 45 | 3.1 / 18 | 1.6 / 5.0 | 5.3 / 23 | 68 / 130 |", why: GROWTH },
    { says: "| 1,000 organizations x 100 objects | 11 / 39 | 2.0 / 6.4 | 1.8 / 8.8 | 13 / 33 | 7.9 / 21 |", why: GROWTH },
    { says: "search: p50 62 and 58 ms against 462 ms and 1.9 s for the same statement without the limit, same run, load ~9).", why: SEARCH },
    { says: "URL calls/s or ~300 list/search calls/s.", why: `${PEER}: the table above read as calls per core` },
    {
      says: "of about 330 KB each), so budget up to ~20 MB of PostgreSQL memory per connection on a busy instance; a search connection keeps up to 24 search statements of the same size (the common shapes: one or two words, by bucket or kind), about 8 MB.",
      why: "a memory budget for the operator: the size of a kept statement was measured in PostgreSQL (bench/notes/2026-11-28-seventh-sitting.md), and the 24 search shapes are search/postgres.ts keptShape's (one or two words or prefixes, by bucket, kind, both or neither); PostgreSQL's memory is not something the service answers",
    },
    { says: "words must answer well under 50 ms: on PostgreSQL a word with 10,000 or more matches in one organization costs 30-55 ms of statement on two cores", why: "measured (bench/notes/2026-11-28-search-1m-where-the-time-goes.md): the floor of a PostgreSQL search, the reason to add Meilisearch" },
    { says: "(10,000 rows visited on as many pages, about two thirds of it, then the facets)", why: "measured (bench/notes/2026-11-28-search-1m-where-the-time-goes.md): where a common term's statement spends its time" },
    { says: "for the objects and media_search rows that pages and searches touch (about 0.5 GB each per million objects; PostgreSQL's default is 128 MB).", why: "sizing advice for PostgreSQL from the 1M-object runs (bench/results/search.md); 128 MB is PostgreSQL's own default, not this service's" },
    { says: "a search for a common term spent 2-14 ms reading its page's 50 objects back into the buffers, against 0.7 ms warm; with 2 GB its HTTP answer came within 3 ms of the statement", why: SEARCH },
    { says: "of API, or 100-150 searches per second on a 2-vCPU machine that also runs PostgreSQL (the peer run's rate)", why: "measured in the peer run (bench/results/peer.md): what one such machine sustained" },
  ],
} satisfies PageClaims;
