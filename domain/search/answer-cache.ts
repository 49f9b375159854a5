import { type SQL, sql } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";
import { preparedSql } from "../core/prepared.ts";
import type { SearchHits } from "../ports/search.ts";

/**
 * A search's hits (the page's ids, where each matched, the total and the facets) kept for the
 * same search asked again, for the PostgreSQL backend; and, the same way, a key search's page
 * of the listing (its ids and total: domain/media/media.ts), whose match set is the search
 * rows' too (one per live object, written with every change to its key, bucket or size).
 * Searching, counting and faceting the match set is most of a search's cost and changes only
 * when the organization's searchable rows do; the views of the page are read afresh every time.
 *
 * Never stale: the database writes a row to `search_changes` for every statement that changes
 * an organization's search rows, extracted text, tags or categories (triggers, migration 0029:
 * whichever code or instance writes). A kept answer remembers the database snapshot taken
 * before it was searched; it is served again only when no change of its organization has been
 * committed outside that snapshot, checked in the one statement every search sends first, on
 * the database the search runs on. So a caller's own write, through this instance or any other
 * sharing the database, is in its next search. The check is what makes it correct; the time a
 * kept answer lives bounds only memory and the rows `search_changes` must keep.
 *
 * Per process: each instance keeps its own answers and checks each against the shared
 * database, so nothing has to be told to other instances.
 */

/** A kept answer not asked for this long is dropped (and rows older than it may go, see prune). */
const TTL_MS = 60_000;
/** Bounds on what one process keeps: the least recently asked answers go first. */
const MAX_ENTRIES = 1_000;
const MAX_BYTES = 32 * 1024 * 1024;
/** How often one process deletes the change rows no kept answer anywhere can need. */
const PRUNE_EVERY_MS = 60_000;
/** Slack on top of TTL_MS between seeing a snapshot and deleting the rows it had settled. */
const PRUNE_MARGIN_MS = 10_000;
/** Deleted per prune at most, so a prune after a long write-only spell stays one short statement. */
const PRUNE_BATCH = 20_000;
/** Batches one maintenance pass deletes at most: 200,000 rows a minute per instance. */
const PRUNE_BATCHES_PER_PASS = 10;

/** What lookupAlong reads beside the check: a prepared statement's name, its row's subquery, and its values from the kept hits. */
export interface Along<T> {
  name: string;
  sql: () => SQL;
  values: (hits: T) => Record<string, unknown>;
}

/** A snapshot and the time just before it was taken. */
export interface Taken {
  snapshot: string;
  at: number;
}

interface Entry {
  /** A SearchHits, or another answer read off the search rows alone (its caller's type). */
  hits: object;
  /** The snapshot under which the answer was known to be current (pg_snapshot as text). */
  snapshot: string;
  at: number;
  bytes: number;
}

export class SearchAnswerCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** Snapshots' xmin as seen over time, oldest first: what may be pruned once TTL_MS has passed. */
  private seen: { at: number; xmin: bigint }[] = [];
  private lastPrune: number;
  private pruning = false;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.lastPrune = now();
  }

  /**
   * The database's snapshot now, and the hits kept under `key` when nothing of `orgId`'s
   * changed since they were current (then they are current under this snapshot too).
   */
  async lookup<T extends object = SearchHits>(db: Db, orgId: string, key: string): Promise<{ hits: T | null; taken: Taken }> {
    const { hits, taken } = await this.lookupAlong<T>(db, orgId, key, null);
    return { hits, taken };
  }

  /**
   * As lookup, and when an answer is kept, `along` in the same statement: a subquery of one row
   * over its own placeholders (`values` of the kept hits), computed only when the kept answer
   * is still current (the views of its page, say), so that serving it is one round trip. Its
   * columns come back as `along` (their names must not be the check's: snapshot, xmin, changed).
   */
  async lookupAlong<T extends object = SearchHits, R extends object = Record<string, unknown>>(
    db: Db,
    orgId: string,
    key: string,
    along: Along<T> | null,
  ): Promise<{ hits: T | null; taken: Taken; along: R | undefined }> {
    // Before the statement: the snapshot is taken after this, so an answer stamped with it is
    // dropped no later than TTL_MS after its snapshot.
    const now = this.now();
    let entry = this.entries.get(key);
    if (entry && now - entry.at > TTL_MS) {
      this.drop(key, entry);
      entry = undefined;
    }
    const check = () => sql`pg_current_snapshot()::text as snapshot, pg_snapshot_xmin(pg_current_snapshot())::text as xmin,
      coalesce((select true from search_changes c
         where c.org_id = ${sql.placeholder("orgId")}::uuid
           and c.xid >= pg_snapshot_xmin(${sql.placeholder("since")}::pg_snapshot)
           and not pg_visible_in_snapshot(c.xid, ${sql.placeholder("since")}::pg_snapshot)
         limit 1), false) as changed`;
    const withAlong = entry && along;
    const [row] = rowsOf<{ snapshot: string; xmin: string; changed: boolean } & Record<string, unknown>>(
      withAlong
        ? await preparedSql(db, along.name, () => sql`select k.*, a.* from (select ${check()}) k left join lateral (select * from (${along.sql()}) a0 where not k.changed) a on true`).execute({
            orgId,
            since: entry!.snapshot,
            ...along.values(entry!.hits as T),
          })
        : await preparedSql(db, "search_changes_since", () => sql`select ${check()}`).execute({ orgId, since: entry?.snapshot ?? null }),
    );
    // After it: the snapshot was taken before this, so nothing is pruned on its word too early.
    this.observe(this.now(), BigInt(row!.xmin));
    const taken = { snapshot: row!.snapshot, at: now };
    if (!entry) return { hits: null, taken, along: undefined };
    this.entries.delete(key);
    if (row!.changed) {
      this.bytes -= entry.bytes;
      return { hits: null, taken, along: undefined };
    }
    // Unchanged between the two snapshots: current under the newer one, which keeps the rows
    // the next check reads few.
    entry.snapshot = row!.snapshot;
    entry.at = now;
    this.entries.set(key, entry);
    return { hits: entry.hits as T, taken, along: row as unknown as R };
  }

  /** Keeps `hits`, searched after `taken` (lookup's snapshot), so at least as new as it. */
  store(key: string, taken: Taken, hits: object): void {
    const bytes = 2 * (key.length + taken.snapshot.length + JSON.stringify(hits).length);
    if (bytes > MAX_BYTES / 16) return;
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    this.entries.set(key, { hits, snapshot: taken.snapshot, at: taken.at, bytes });
    this.bytes += bytes;
    for (const [k, e] of this.entries) {
      if (this.entries.size <= MAX_ENTRIES && this.bytes <= MAX_BYTES) break;
      this.drop(k, e);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  private observe(at: number, xmin: bigint): void {
    const last = this.seen.at(-1);
    if (!last || at - last.at >= 1_000) this.seen.push({ at, xmin });
  }

  /**
   * Deletes the change rows of transactions that had ended before a snapshot seen more than
   * TTL_MS + PRUNE_MARGIN_MS ago. Every answer kept anywhere was made current after then (each
   * process drops its answers after TTL_MS), under a snapshot whose xmin is at least that
   * one's (a later snapshot's xmin is never lower), and the check reads no row below its
   * snapshot's xmin. At most once per PRUNE_EVERY_MS per process; its failure costs nothing
   * but rows kept longer.
   */
  prune(db: Db, onError: (err: unknown) => void): void {
    const now = this.now();
    if (this.pruning || now - this.lastPrune < PRUNE_EVERY_MS) return;
    const settled = this.settled(now);
    if (settled === null) return;
    this.lastPrune = now;
    this.pruning = true;
    this.deleteBelow(db, settled)
      .catch(onError)
      .finally(() => {
        this.pruning = false;
      });
  }

  /**
   * The maintenance pass's share (worker/maintenance.ts, every minute on every instance): sees a
   * snapshot and deletes what the ones it saw before settle, as searches do, so the change rows
   * of organizations nobody searches do not pile up. Batches until none is left below the
   * horizon, at most PRUNE_BATCHES_PER_PASS; answers how many rows went.
   */
  async housekeep(db: Db): Promise<number> {
    const [row] = rowsOf<{ xmin: string }>(await db.execute(sql`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`));
    const now = this.now();
    this.observe(now, BigInt(row!.xmin));
    if (this.pruning) return 0;
    const settled = this.settled(now);
    if (settled === null) return 0;
    this.lastPrune = now;
    this.pruning = true;
    try {
      let deleted = 0;
      for (let batch = 0; batch < PRUNE_BATCHES_PER_PASS; batch++) {
        const n = await this.deleteBelow(db, settled);
        deleted += n;
        if (n < PRUNE_BATCH) break;
      }
      return deleted;
    } finally {
      this.pruning = false;
    }
  }

  /** The newest xmin seen at least TTL_MS + PRUNE_MARGIN_MS before `now` (and forgets the older ones). */
  private settled(now: number): bigint | null {
    let settled: bigint | null = null;
    while (this.seen.length && now - this.seen[0]!.at >= TTL_MS + PRUNE_MARGIN_MS) settled = this.seen.shift()!.xmin;
    return settled;
  }

  private async deleteBelow(db: Db, xmin: bigint): Promise<number> {
    const result = await db.execute(
      sql`with gone as (delete from search_changes where ctid = any(array(select ctid from search_changes where xid < ${xmin.toString()}::xid8 limit ${sql.raw(String(PRUNE_BATCH))})) returning 1)
        select count(*)::int as n from gone`,
    );
    return rowsOf<{ n: number }>(result)[0]?.n ?? 0;
  }
}

const caches = new WeakMap<object, SearchAnswerCache>();

/** The answers kept for one database (the primary's handle): one cache per app, whatever else shares the process. */
export function answerCacheFor(db: Db): SearchAnswerCache {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new SearchAnswerCache()));
  return cache;
}
