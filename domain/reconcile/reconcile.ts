import { and, asc, eq, gt, inArray, isNull, type SQL, sql } from "drizzle-orm";
import type { ReconcileFindings, ReconcileReport } from "../../contract/reconcile.ts";
import { type Db, rowsOf } from "../../db/client.ts";
import { buckets, derivatives, mediaObjects, organizations, orgUsage, uploadReservations } from "../../db/schema/index.ts";
import type { Deps } from "../core/deps.ts";
import { enqueueJob } from "../core/jobs.ts";
import { markThumbnailPending } from "../derivatives/derivatives.ts";
import { objectsWithIds, staleLabels, writeObjectLabels } from "../labels/object-labels.ts";
import { bucketDerivativesPrefix, bucketPrefix } from "../media/storage-keys.ts";
import type { ListedObject } from "../ports/storage.ts";
import { keptCounter, snapshotDay } from "../usage/counters.ts";
import { mergeJoin } from "./merge.ts";

/**
 * Reconcile: storage and the catalogue compared, organization by organization, bucket by
 * bucket. Each bucket is a merge-join of its storage listing with its rows read through a
 * cursor in the same (byte) order, so memory holds a page of each side whatever the bucket's
 * size. What one side has and the other lacks is checked again against the current rows
 * before it is reported (the listing and the cursor are not one instant), and only then, with
 * `fix`, repaired:
 * - bytes without a row (uploads PUT and never confirmed, derivative files no row points to)
 *   and derivatives of objects that no longer exist are deleted, once older than `olderThanMs`;
 * - ready thumbnails whose bytes are missing are set to pending and made again;
 * - usage counters are set to what the rows say, under the counters' row lock;
 * - objects whose shown labels (media_objects.labels) disagree with their links are rewritten
 *   from them (the database's triggers keep them current: only a write that bypassed them, such
 *   as one under session_replication_role = replica, leaves them stale).
 * Rows whose bytes are missing are reported and left alone: the bytes may come back from a
 * storage restore, and deleting the object is the owner's decision.
 */

export type FindingKind = "bytesWithoutRow" | "rowsWithoutBytes" | "derivativesWithoutSource" | "staleLabels";

export interface Finding {
  orgId: string;
  kind: FindingKind;
  path: string;
  size: number | null;
  objectId: string | null;
}

export interface ReconcileOptions {
  fix: boolean;
  /** Storage objects younger than this are never deleted (a client may still confirm them). */
  olderThanMs: number;
  /** Told of every finding as it is made (the report keeps only the first few): `npm run reconcile -- --list`. */
  onFinding?: (finding: Finding) => void;
}

/** A day: far beyond the time between an upload's PUT and its confirm (an upload still reserved is never touched at all). */
export const DEFAULT_OLDER_THAN_MS = 24 * 60 * 60 * 1000;
const SAMPLES = 20;
const PAGE = 1000;
const BATCH = 500;

class Tally {
  count = 0;
  bytes = 0;
  readonly samples: ReconcileFindings["samples"] = [];

  constructor(private readonly tell?: (path: string, size: number | null, objectId: string | null) => void) {}

  add(path: string, size: number | null, objectId: string | null): void {
    this.tell?.(path, size, objectId);
    this.count++;
    this.bytes += size ?? 0;
    if (this.samples.length < SAMPLES) this.samples.push({ path, size, objectId });
  }

  toJSON(): ReconcileFindings {
    return { count: this.count, bytes: this.bytes, samples: this.samples };
  }
}

interface Run {
  deps: Deps;
  orgId: string;
  opts: ReconcileOptions;
  /** Storage objects written after this are in flight: left out. */
  startedAt: Date;
  scanned: { storageObjects: number; storageBytes: number; rows: number };
  bytesWithoutRow: Tally;
  rowsWithoutBytes: Tally;
  derivativesWithoutSource: Tally;
  staleLabels: Tally;
  pending: { count: number; bytes: number };
  fixed: { deletedObjects: number; deletedBytes: number; regeneratedThumbnails: number; usageRepaired: boolean; relabeledObjects: number };
  jobsQueued: boolean;
}

function teller(opts: ReconcileOptions, orgId: string, kind: FindingKind) {
  const tell = opts.onFinding;
  return tell ? (path: string, size: number | null, objectId: string | null) => tell({ orgId, kind, path, size, objectId }) : undefined;
}

let cursors = 0;

/**
 * Runs `consume` in a transaction holding a cursor over `query`: its pages come one FETCH at
 * a time. The transaction is READ COMMITTED, so the cursor reads one snapshot while the
 * statements `consume` runs meanwhile (the checks again) see what is committed now.
 */
async function withCursor<T, R>(db: Db, query: SQL, consume: (tx: Db, pages: AsyncIterable<T[]>) => Promise<R>): Promise<R> {
  return db.transaction(async (tx) => {
    const name = `reconcile_${++cursors}`;
    await tx.execute(sql`declare ${sql.raw(name)} no scroll cursor for ${query}`);
    async function* pages(): AsyncGenerator<T[]> {
      for (;;) {
        const rows = rowsOf<T>(await tx.execute(sql.raw(`fetch ${PAGE} from ${name}`)));
        if (rows.length > 0) yield rows;
        if (rows.length < PAGE) return;
      }
    }
    const result = await consume(tx as unknown as Db, pages());
    await tx.execute(sql.raw(`close ${name}`));
    return result;
  });
}

function counted(run: Run, pages: AsyncIterable<ListedObject[]>): AsyncIterable<ListedObject[]> {
  return (async function* () {
    for await (const page of pages) {
      run.scanned.storageObjects += page.length;
      for (const o of page) run.scanned.storageBytes += o.size;
      yield page;
    }
  })();
}

const oldEnough = (run: Run, o: ListedObject) => o.lastModified !== null && o.lastModified.getTime() < run.deps.clock.now().getTime() - run.opts.olderThanMs;
const inFlight = (run: Run, o: ListedObject) => o.lastModified === null || o.lastModified.getTime() >= run.startedAt.getTime();

async function deleteObject(run: Run, o: ListedObject): Promise<void> {
  await run.deps.storage.delete(o.key);
  run.fixed.deletedObjects++;
  run.fixed.deletedBytes += o.size;
}

interface ObjectRow {
  key: string;
  live: boolean;
  size: number | null;
  id: string | null;
}

/** A bucket's objects: storage under `<bucketId>/` against its rows, grouped by key (a live row and soft-deleted ones may share it). */
async function reconcileObjects(run: Run, bucketId: string): Promise<void> {
  const prefix = bucketPrefix(bucketId);
  const query = sql`
    select key, bool_or(deleted_at is null) as live, (max(size) filter (where deleted_at is null))::float8 as size,
      (array_agg(id::text) filter (where deleted_at is null))[1] as id
    from media_objects where bucket_id = ${bucketId} group by key order by key collate "C"`;
  await withCursor<ObjectRow, void>(run.deps.db, query, async (tx, rows) => {
    let candidates: ListedObject[] = [];
    const flush = async () => {
      if (candidates.length > 0) await settleObjectCandidates(run, tx, bucketId, candidates);
      candidates = [];
    };
    for await (const pair of mergeJoin(counted(run, run.deps.storage.list(prefix)), (o) => o.key.slice(prefix.length), rows, (r) => r.key)) {
      if (pair.right) run.scanned.rows++;
      if (pair.left && !pair.right) {
        if (inFlight(run, pair.left)) continue;
        candidates.push(pair.left);
        if (candidates.length >= BATCH) await flush();
      } else if (pair.right && !pair.left && pair.right.live) {
        run.rowsWithoutBytes.add(`${prefix}${pair.right.key}`, pair.right.size === null ? null : Number(pair.right.size), pair.right.id);
      }
    }
    await flush();
  });
}

/** Bytes no row knew of when the cursor opened: checked against the rows and reservations as they are now. */
async function settleObjectCandidates(run: Run, tx: Db, bucketId: string, candidates: ListedObject[]): Promise<void> {
  const prefix = bucketPrefix(bucketId);
  const keys = candidates.map((o) => o.key.slice(prefix.length));
  const known = new Set(
    (await tx.select({ key: mediaObjects.key }).from(mediaObjects).where(and(eq(mediaObjects.bucketId, bucketId), inArray(mediaObjects.key, keys)))).map((r) => r.key),
  );
  const reserved = new Set(
    (
      await tx
        .select({ key: uploadReservations.key })
        .from(uploadReservations)
        .where(and(eq(uploadReservations.bucketId, bucketId), inArray(uploadReservations.key, keys), gt(uploadReservations.expiresAt, run.deps.clock.now())))
    ).map((r) => r.key),
  );
  for (const o of candidates) {
    const key = o.key.slice(prefix.length);
    if (known.has(key)) continue;
    if (reserved.has(key)) {
      run.pending.count++;
      run.pending.bytes += o.size;
      continue;
    }
    run.bytesWithoutRow.add(o.key, o.size, null);
    if (run.opts.fix && oldEnough(run, o)) await deleteObject(run, o);
  }
}

interface DerivativeRow {
  key: string;
  object_id: string;
  state: string;
  size: number | null;
}

/** A bucket's derivative files (under `_derivatives/<bucketId>/`) against the derivative rows that point to them. */
async function reconcileDerivatives(run: Run, bucketId: string): Promise<void> {
  const query = sql`
    select d.storage_key as key, d.object_id::text as object_id, d.state, d.size::float8 as size
    from derivatives d join media_objects m on m.id = d.object_id
    where m.bucket_id = ${bucketId} and d.storage_key is not null order by d.storage_key collate "C"`;
  await withCursor<DerivativeRow, void>(run.deps.db, query, async (tx, rows) => {
    let files: ListedObject[] = [];
    let missing: DerivativeRow[] = [];
    const flush = async () => {
      if (files.length > 0) await settleDerivativeFiles(run, tx, files);
      if (missing.length > 0) await settleMissingDerivatives(run, tx, missing);
      files = [];
      missing = [];
    };
    for await (const pair of mergeJoin(counted(run, run.deps.storage.list(bucketDerivativesPrefix(bucketId))), (o) => o.key, rows, (r) => r.key)) {
      if (pair.right) run.scanned.rows++;
      if (pair.left && !pair.right && !inFlight(run, pair.left)) files.push(pair.left);
      // A pending row keeps the key of the bytes it will replace, which may be gone already.
      else if (pair.right && !pair.left && pair.right.state === "ready") missing.push(pair.right);
      if (files.length + missing.length >= BATCH) await flush();
    }
    await flush();
  });
}

/** Derivative files no row pointed to: of an object that is gone (no source), or stale (replaced by a newer file). */
async function settleDerivativeFiles(run: Run, tx: Db, files: ListedObject[]): Promise<void> {
  const referenced = new Set(
    (await tx.select({ key: derivatives.storageKey }).from(derivatives).where(inArray(derivatives.storageKey, files.map((f) => f.key)))).map((r) => r.key),
  );
  const objectIdOf = (f: ListedObject) => f.key.split("/")[2] ?? "";
  const ids = [...new Set(files.map(objectIdOf))].filter((id) => /^[0-9a-f-]{36}$/i.test(id));
  const sources = new Set(ids.length === 0 ? [] : (await tx.select({ id: mediaObjects.id }).from(mediaObjects).where(inArray(mediaObjects.id, ids))).map((r) => r.id));
  for (const f of files) {
    if (referenced.has(f.key)) continue;
    const objectId = objectIdOf(f);
    if (sources.has(objectId)) run.bytesWithoutRow.add(f.key, f.size, objectId);
    else run.derivativesWithoutSource.add(f.key, f.size, null);
    if (run.opts.fix && oldEnough(run, f)) await deleteObject(run, f);
  }
}

/** Ready thumbnails whose file was not listed: still so now? Then reported, and with fix made again. */
async function settleMissingDerivatives(run: Run, tx: Db, rows: DerivativeRow[]): Promise<void> {
  const still = await tx
    .select({ key: derivatives.storageKey, objectId: mediaObjects.id, kind: mediaObjects.kind, etag: mediaObjects.etag, live: isNull(mediaObjects.deletedAt) })
    .from(derivatives)
    .innerJoin(mediaObjects, eq(mediaObjects.id, derivatives.objectId))
    .where(and(inArray(derivatives.storageKey, rows.map((r) => r.key)), eq(derivatives.state, "ready")));
  const byKey = new Map(still.map((s) => [s.key, s]));
  for (const row of rows) {
    const now = byKey.get(row.key);
    if (!now) continue;
    run.rowsWithoutBytes.add(row.key, row.size === null ? null : Number(row.size), row.object_id);
    if (!run.opts.fix || !now.live) continue;
    await markThumbnailPending(tx, { id: now.objectId, kind: now.kind, etag: now.etag }, run.deps.clock.now());
    await enqueueJob(tx, "derivatives.generate", { orgId: run.orgId, objectId: now.objectId });
    run.fixed.regeneratedThumbnails++;
    run.jobsQueued = true;
  }
}

interface StaleLabelRow {
  id: string;
  bucket_id: string;
  key: string;
  size: number | null;
}

/**
 * The organization's objects whose `labels` disagree with their links, in keyset pages of ids,
 * each page its own statement: no transaction stays open across the walk (the embedded
 * database runs one at a time), and the repair of a page locks its objects for one statement.
 * It reads the links again under the objects' locks, as the triggers do.
 */
async function reconcileLabels(run: Run): Promise<void> {
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const rows = rowsOf<StaleLabelRow>(
      await run.deps.db.execute(sql`
        select o.id::text as id, o.bucket_id::text as bucket_id, o.key, o.size::float8 as size
        from media_objects o where o.org_id = ${run.orgId} and o.id > ${after}::uuid and ${staleLabels}
        order by o.id limit ${PAGE}`),
    );
    for (const r of rows) run.staleLabels.add(`${bucketPrefix(r.bucket_id)}${r.key}`, r.size === null ? null : Number(r.size), r.id);
    if (run.opts.fix && rows.length > 0) {
      run.fixed.relabeledObjects += await writeObjectLabels(run.deps.db, objectsWithIds(run.orgId, rows.map((r) => r.id)));
    }
    if (rows.length < PAGE) return;
    after = rows.at(-1)!.id;
  }
}

type Counters = ReconcileReport["usage"]["recorded"];

async function countUsage(db: Db, orgId: string): Promise<{ recorded: Counters; counted: Counters; buckets: ReconcileReport["usage"]["buckets"] }> {
  const [row] = rowsOf<{ used: number; objects: number; reserved: number; r_used: number; r_objects: number; r_reserved: number }>(
    await db.execute(sql`
      select
        (select coalesce(sum(size), 0) from media_objects where org_id = ${orgId} and deleted_at is null)::float8 as used,
        (select count(*) from media_objects where org_id = ${orgId} and deleted_at is null)::float8 as objects,
        (select coalesce(sum(bytes), 0) from upload_reservations where org_id = ${orgId})::float8 as reserved,
        (u.used_storage + coalesce(p.used, 0))::float8 as r_used, (u.object_count + coalesce(p.objects, 0))::float8 as r_objects,
        greatest(u.reserved_storage + coalesce(p.reserved, 0), 0)::float8 as r_reserved
      from org_usage u
      left join lateral (
        select sum(used_storage) as used, sum(object_count) as objects, sum(reserved_storage) as reserved from storage_deltas where org_id = u.org_id
      ) p on true
      where u.org_id = ${orgId}`),
  );
  const bucketRows = rowsOf<{ id: string; recorded: number; counted: number }>(
    await db.execute(sql`
      select b.id::text as id,
        ${keptCounter("b", "object_count")}::float8 as recorded,
        (select count(*) from media_objects m where m.bucket_id = b.id and m.deleted_at is null)::float8 as counted
      from buckets b where b.org_id = ${orgId}`),
  );
  const n = (v: unknown) => Number(v ?? 0);
  return {
    recorded: { usedStorage: n(row?.r_used), objectCount: n(row?.r_objects), reservedStorage: n(row?.r_reserved) },
    counted: { usedStorage: n(row?.used), objectCount: n(row?.objects), reservedStorage: n(row?.reserved) },
    buckets: bucketRows.filter((b) => n(b.recorded) !== n(b.counted)).map((b) => ({ bucketId: b.id, recorded: n(b.recorded), counted: n(b.counted) })),
  };
}

const sameCounters = (a: Counters, b: Counters) => a.usedStorage === b.usedStorage && a.objectCount === b.objectCount && a.reservedStorage === b.reservedStorage;

/**
 * Sets the counters to what the rows say, in one statement: its snapshot is shared by the
 * counting, the removal of the pending deltas (storage_deltas) and the updates, so a confirm
 * or delete committing meanwhile is neither counted nor removed: its delta is folded later,
 * on top of the corrected value.
 */
async function repairUsage(deps: Deps, orgId: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const [after] = rowsOf<{ used_storage: string | number; allocated_storage: string | number; object_count: string | number }>(
      await tx.execute(sql`
        with gone as (delete from storage_deltas where org_id = ${orgId} returning seq),
        counted as (
          select (select coalesce(sum(size), 0) from media_objects where org_id = ${orgId} and deleted_at is null) as used,
                 (select count(*) from media_objects where org_id = ${orgId} and deleted_at is null) as objects,
                 (select coalesce(sum(bytes), 0) from upload_reservations where org_id = ${orgId}) as reserved
        ),
        fixed_buckets as (
          update buckets set object_count = (select count(*) from media_objects m where m.bucket_id = buckets.id and m.deleted_at is null)
           where org_id = ${orgId} returning id
        )
        update org_usage u set used_storage = c.used, object_count = c.objects, reserved_storage = c.reserved, updated_at = now()
          from counted c
         where u.org_id = ${orgId} and (select count(*) from gone) >= 0 and (select count(*) from fixed_buckets) >= 0
        returning u.used_storage, u.allocated_storage, u.object_count`),
    );
    if (!after) return;
    const state = { usedStorage: Number(after.used_storage), allocatedStorage: Number(after.allocated_storage), objectCount: Number(after.object_count) };
    await snapshotDay(tx, orgId, deps.clock.now(), state);
  });
}

/** One organization: every bucket's objects and derivatives, then its usage counters. */
export async function reconcileOrganization(deps: Deps, orgId: string, opts: ReconcileOptions): Promise<ReconcileReport> {
  const [org] = await deps.db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, orgId));
  const startedAt = deps.clock.now();
  const run: Run = {
    deps,
    orgId,
    opts,
    startedAt,
    scanned: { storageObjects: 0, storageBytes: 0, rows: 0 },
    bytesWithoutRow: new Tally(teller(opts, orgId, "bytesWithoutRow")),
    rowsWithoutBytes: new Tally(teller(opts, orgId, "rowsWithoutBytes")),
    derivativesWithoutSource: new Tally(teller(opts, orgId, "derivativesWithoutSource")),
    staleLabels: new Tally(teller(opts, orgId, "staleLabels")),
    pending: { count: 0, bytes: 0 },
    fixed: { deletedObjects: 0, deletedBytes: 0, regeneratedThumbnails: 0, usageRepaired: false, relabeledObjects: 0 },
    jobsQueued: false,
  };
  let after: string | null = null;
  for (;;) {
    const page: { id: string }[] = await deps.db
      .select({ id: buckets.id })
      .from(buckets)
      .where(and(eq(buckets.orgId, orgId), after ? gt(buckets.id, after) : undefined))
      .orderBy(asc(buckets.id))
      .limit(100);
    for (const b of page) {
      await reconcileObjects(run, b.id);
      await reconcileDerivatives(run, b.id);
    }
    if (page.length < 100) break;
    after = page.at(-1)!.id;
  }
  if (run.jobsQueued) deps.jobs.kick();
  await reconcileLabels(run);

  let usage = await countUsage(deps.db, orgId);
  const consistent = sameCounters(usage.recorded, usage.counted) && usage.buckets.length === 0;
  if (!consistent && opts.fix) {
    await repairUsage(deps, orgId);
    run.fixed.usageRepaired = true;
  }
  const notes: string[] = [];
  if (run.rowsWithoutBytes.count > 0) {
    notes.push(
      "Rows without bytes are left as they are: restore the bytes from a storage backup, or delete the objects (media_delete). Ready thumbnails without bytes are made again by fix.",
    );
  }
  if (opts.fix) {
    const young = run.bytesWithoutRow.count + run.derivativesWithoutSource.count - run.fixed.deletedObjects;
    if (young > 0) notes.push(`${young} storage objects were kept: they are younger than ${Math.round(opts.olderThanMs / 3_600_000)} h and may still be confirmed or referenced`);
  }
  return {
    orgId,
    name: org?.name ?? "",
    fix: opts.fix,
    startedAt: startedAt.toISOString(),
    finishedAt: deps.clock.now().toISOString(),
    scanned: run.scanned,
    bytesWithoutRow: run.bytesWithoutRow.toJSON(),
    rowsWithoutBytes: run.rowsWithoutBytes.toJSON(),
    derivativesWithoutSource: run.derivativesWithoutSource.toJSON(),
    staleLabels: run.staleLabels.toJSON(),
    pendingUploads: run.pending,
    usage: { consistent, recorded: usage.recorded, counted: usage.counted, buckets: usage.buckets },
    fixed: run.fixed,
    notes,
  };
}

/** Every organization in turn (keyset pages of ids), as its report is ready. */
export async function* reconcileOrganizations(deps: Deps, opts: ReconcileOptions): AsyncGenerator<ReconcileReport> {
  let after: string | null = null;
  for (;;) {
    const page: { id: string }[] = await deps.db
      .select({ id: organizations.id })
      .from(organizations)
      .where(after ? gt(organizations.id, after) : undefined)
      .orderBy(asc(organizations.id))
      .limit(100);
    for (const o of page) yield await reconcileOrganization(deps, o.id, opts);
    if (page.length < 100) return;
    after = page.at(-1)!.id;
  }
}

export interface UnattributedReport {
  /** Storage under a bucket id no bucket has (a deleted bucket whose purge did not finish). */
  bytesWithoutBucket: ReconcileFindings;
  /** Derivative files under a bucket id no bucket has. */
  derivativesWithoutBucket: ReconcileFindings;
  fixed: { deletedObjects: number; deletedBytes: number };
}

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

/**
 * What belongs to no organization: top-level storage prefixes that are no bucket's. Counted
 * by streaming each prefix's listing; with fix, a prefix is deleted when its bucket still does
 * not exist and everything under it is older than `olderThanMs`.
 */
export async function reconcileUnattributed(deps: Deps, opts: ReconcileOptions): Promise<UnattributedReport> {
  const bytes = new Tally();
  const derived = new Tally();
  const fixed = { deletedObjects: 0, deletedBytes: 0 };
  const cutoff = deps.clock.now().getTime() - opts.olderThanMs;
  const bucketExists = async (id: string) => isUuid(id) && (await deps.db.select({ id: buckets.id }).from(buckets).where(eq(buckets.id, id))).length > 0;
  const sweep = async (prefix: string, tally: Tally) => {
    let newest = 0;
    let count = 0;
    let size = 0;
    for await (const page of deps.storage.list(prefix)) {
      for (const o of page) {
        tally.add(o.key, o.size, null);
        newest = Math.max(newest, o.lastModified?.getTime() ?? Number.POSITIVE_INFINITY);
        count++;
        size += o.size;
      }
    }
    if (opts.fix && count > 0 && newest < cutoff && !(await bucketExists(prefix.split("/").at(-2)!))) {
      fixed.deletedObjects += await deps.storage.deletePrefix(prefix);
      fixed.deletedBytes += size;
    }
  };
  for await (const page of deps.storage.listPrefixes("")) {
    for (const prefix of page) {
      if (prefix === "_derivatives/") {
        for await (const inner of deps.storage.listPrefixes(prefix)) {
          for (const p of inner) if (!(await bucketExists(p.split("/")[1]!))) await sweep(p, derived);
        }
      } else if (!(await bucketExists(prefix.slice(0, -1)))) {
        await sweep(prefix, bytes);
      }
    }
  }
  return { bytesWithoutBucket: bytes.toJSON(), derivativesWithoutBucket: derived.toJSON(), fixed };
}
