import { sql } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";
import { preparedSql } from "../core/prepared.ts";
import { lockUsage, pendingStorage, unconfirmedFits } from "../usage/counters.ts";

/** One single-shot upload to reserve for: what presignUpload knows when it asks. */
export interface SingleShotRequest {
  bucketId: string;
  key: string;
  /** Declared size; undefined reserves nothing (confirm measures). */
  size: number | undefined;
  /**
   * What the URL counts against the organization's unconfirmed bytes: the size, or without
   * one the most its URL may carry (UPLOAD_UNSIZED_MAX_BYTES, `slack`).
   */
  counts: number;
  /** UPLOAD_UNSIZED_MAX_BYTES: how far unconfirmed bytes may pass the free allocation (unconfirmedFits). */
  slack: number;
  contentType: string;
  tags: string[];
  now: Date;
  lifetimeMs: number;
}

/** What the catalogue says a key holds, as seen by the statement that reserved its upload. */
export interface KeySeen {
  /** The bucket's name (the statement checked the bucket is the organization's). */
  bucketName: string;
  /** ETag of the object the catalogue places at the key (live, else the latest in the trash); null for none. */
  etag: string | null;
  /** The catalogue cannot tell: an unconfirmed upload or a purge under way at the key. */
  unsure: boolean;
}

const p = (name: string) => sql.placeholder(name);

// Every request of the batch is a row of `req`; the subqueries see the tables as they were
// before this statement, so a request does not see its own reservation (or its batch's) as
// pending. The quota conditions cover the batch's total: all are reserved or none. Two of
// them: the declared sizes fit the allocation, and what the URLs count (a URL without a size
// counts its maximum) fits the unconfirmed bound.
const reserveSql = () => sql`
  with durability as (select set_config('synchronous_commit', 'off', true)),
  req as (
    select r.* from jsonb_to_recordset(${p("rows")}::text::jsonb)
      as r(i integer, bucket_id uuid, key text, bytes bigint, counts bigint, content_type text, tags jsonb, expires_at timestamptz, created_at timestamptz)
  ),
  ok as (select req.*, b.name as bucket_name from req join buckets b on b.id = req.bucket_id and b.org_id = ${p("orgId")}),
  reserved as (
    update org_usage set reserved_storage = reserved_storage + (select sum(bytes) from ok), updated_at = now()
    where org_id = ${p("orgId")} and exists (select 1 from ok)
      and used_storage + reserved_storage + ${pendingStorage(p("orgId"))} + (select sum(bytes) from ok) <= allocated_storage
      and ${unconfirmedFits(p("orgId"), sql`(select sum(bytes) from ok)`, p("slack"), sql`select ok.bucket_id, ok.key, null::text, ok.counts - ok.bytes from ok where ok.counts > ok.bytes`)}
    returning org_id
  ),
  ins as (
    insert into upload_reservations (org_id, bucket_id, key, bytes, bound, content_type, tags, expires_at, created_at)
    select reserved.org_id, ok.bucket_id, ok.key, ok.bytes, nullif(greatest(ok.counts, ok.bytes), ok.bytes), ok.content_type,
      array(select jsonb_array_elements_text(ok.tags)), ok.expires_at, ok.created_at
    from reserved, ok, durability
    returning 1
  )
  select ok.i, ok.bucket_name, (select count(*) from ins) > 0 as reserved, live.etag as live_etag,
    trash.etag as trash_etag, coalesce(trash.purging, false) as purging,
    exists (select 1 from upload_reservations u where u.bucket_id = ok.bucket_id and u.key = ok.key) as pending
  from ok
  left join lateral (select o.id, o.etag from media_objects o where o.bucket_id = ok.bucket_id and o.key = ok.key and o.deleted_at is null) live on true
  -- Only without a live object: the latest deleted one's bytes are what the key holds, unless a purge is removing them.
  left join lateral (
    select (array_agg(o.etag order by o.deleted_at desc) filter (where o.purge_queued_at is null))[1] as etag,
      bool_or(o.purge_queued_at is not null) as purging
    from media_objects o where o.bucket_id = ok.bucket_id and o.key = ok.key and o.deleted_at is not null
  ) trash on live.id is null`;

interface Row {
  i: number;
  bucket_name: string;
  reserved: boolean;
  live_etag: string | null;
  trash_etag: string | null;
  purging: boolean;
  pending: boolean;
}

/** Booleans from raw SQL: PGlite and postgres.js both give booleans, but be lenient. */
const truthy = (v: unknown): boolean => v === true || v === "t" || v === 1;

/**
 * One statement for these requests; per request its row, or undefined when its bucket is not
 * the organization's.
 *
 * A statement sees the upload rows committed when it started, and the organization's usage
 * row as it is once locked. Declared sizes are checked on the locked row, exactly; what URLs
 * without a size count is summed from upload rows, which another instance's statement may
 * commit while this one waits for the lock. So a batch holding such a URL locks the usage row
 * first, in a transaction of its own, and its statement starts after every earlier holder
 * committed: concurrent URLs without a size never pass the bound together. (Batches of
 * declared sizes alone keep their one statement; the allocation bounds them anyway.)
 */
async function reserveTogether(db: Db, orgId: string, requests: readonly SingleShotRequest[], locked = false): Promise<(Row | undefined)[]> {
  const rows = requests.map((r, i) => ({
    i,
    bucket_id: r.bucketId,
    key: r.key,
    bytes: r.size ?? 0,
    counts: Math.max(r.counts, r.size ?? 0),
    content_type: r.contentType,
    tags: r.tags,
    expires_at: new Date(r.now.getTime() + r.lifetimeMs).toISOString(),
    created_at: r.now.toISOString(),
  }));
  const values = { orgId, slack: requests[0]!.slack, rows: JSON.stringify(rows) };
  const unsized = rows.some((r) => r.counts > r.bytes);
  const result = unsized || locked
    ? await db.transaction(async (tx) => {
        await lockUsage(tx, orgId);
        return preparedSql(tx, "reserve_uploads", reserveSql).execute(values);
      })
    : await preparedSql(db, "reserve_uploads", reserveSql).execute(values);
  const found = rowsOf<Row>(result);
  const byIndex = new Map(found.map((row) => [Number(row.i), row]));
  return requests.map((_, i) => byIndex.get(i));
}

const seenOf = (row: Row | undefined): KeySeen | null =>
  row && truthy(row.reserved) ? { bucketName: row.bucket_name, etag: row.live_etag ?? row.trash_etag, unsure: truthy(row.pending) || truthy(row.purging) } : null;

interface Waiting {
  request: SingleShotRequest;
  resolve: (seen: KeySeen | null) => void;
  reject: (err: unknown) => void;
}

/** Requests of one organization waiting for the statement under way to finish, per database handle. */
const queues = new WeakMap<object, Map<string, Waiting[]>>();
/** Most requests one statement carries. */
const MAX_BATCH = 200;

/**
 * Reserves a single-shot upload's declared size, counts what its URL may carry against the
 * organization's unconfirmed bytes, and reports what the catalogue says its key holds; null
 * when refused (the bucket is not the organization's, the allocation has no room, or too much
 * is unconfirmed: the caller tells which). One statement (the quota UPDATE, the reservation
 * INSERT and the key's lookups; see reserveTogether for the lock a URL without a size takes
 * first), committed without waiting for the WAL flush: a single-shot reservation
 * is soft state, and if PostgreSQL's host crashed in the fraction of a second before the WAL
 * writer flushed it, what is lost is a quota hold and the declared tags, not consistency
 * (confirm measures the object and does without a reservation).
 *
 * The UPDATE locks the organization's usage row until its statement commits, so one
 * organization's reservations run one after another whatever the caller does. Here they do
 * so in batches: the first request of an organization goes at once; those that arrive while
 * its statement is under way go together in the next, one statement and one commit for all of
 * them. (bench/notes/2026-11-29-summary-tables.md, signed upload URL: upload URLs were
 * limited by PostgreSQL's CPU per statement on two cores shared with it.) A batch the
 * allocation refuses as a whole is retried one request at a time, in arrival order, so each
 * gets the answer it would have got alone.
 */
export function reserveSingleShot(db: Db, orgId: string, request: SingleShotRequest): Promise<KeySeen | null> {
  return new Promise((resolve, reject) => {
    let byOrg = queues.get(db);
    if (!byOrg) queues.set(db, (byOrg = new Map()));
    const waiting = byOrg.get(orgId);
    if (waiting) return void waiting.push({ request, resolve, reject });
    byOrg.set(orgId, []);
    void drain(db, byOrg, orgId, [{ request, resolve, reject }]);
  });
}

async function drain(db: Db, byOrg: Map<string, Waiting[]>, orgId: string, first: Waiting[]): Promise<void> {
  for (let batch = first; batch.length > 0; batch = byOrg.get(orgId)!.splice(0, MAX_BATCH)) {
    // Whatever fails answers the batch, so the organization's queue never stops behind it.
    await reserveBatch(db, orgId, batch).catch((err) => batch.forEach((w) => w.reject(err)));
  }
  byOrg.delete(orgId);
}

async function reserveBatch(db: Db, orgId: string, batch: Waiting[]): Promise<void> {
  // A failure rejects the batch (drain): the inputs are validated before they get here,
  // so what fails is the database (down, a timeout), and retrying each request alone would
  // make the last one wait for as many failures as the batch holds.
  const rows = await reserveTogether(db, orgId, batch.map((w) => w.request));
  const refused = rows.some((row) => row && !truthy(row.reserved));
  if (!refused) return batch.forEach((w, i) => w.resolve(seenOf(rows[i])));
  // Refused: each alone, in order, so those that fit are reserved, and after the usage row's
  // lock (lockUsage): a statement that waited for a fold may have counted its deltas twice.
  // Refusals are rare, so the reservations that fit keep their one statement. (A failure here
  // rejects those not answered yet; a promise already resolved keeps its answer.)
  for (const w of batch) w.resolve(seenOf((await reserveTogether(db, orgId, [w.request], true))[0]));
}
