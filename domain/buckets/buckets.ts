import { and, count, eq, isNull, sql } from "drizzle-orm";
import type { Bucket } from "../../contract/buckets.ts";
import type { Deleted } from "../../contract/common.ts";
import { buckets, mediaObjects, orgUsage, uploadReservations } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import { type Owned, visiblePage } from "../access/owned-rows.ts";
import { assertBucketAllowed } from "../access/visibility.ts";
import type { Deps } from "../core/deps.ts";
import { readDb } from "../core/reads.ts";
import { errors } from "../core/errors.ts";
import { prepared } from "../core/prepared.ts";
import { enqueueJob } from "../core/jobs.ts";
import { type Page, page } from "../core/pagination.ts";
import { objectPath } from "../media/storage-keys.ts";
import { releaseReservation } from "../usage/counters.ts";
import { emitEvent } from "../events/emit.ts";

type BucketRow = typeof buckets.$inferSelect;

const view = (b: BucketRow): Bucket => ({ id: b.id, name: b.name, createdAt: b.createdAt.toISOString() });

/**
 * The bucket, if it belongs to the caller's organization (404 otherwise, even when it exists
 * elsewhere), and the caller's key may use it (403). Every presign and media path starts here.
 */
export async function resolveBucket(deps: Deps, caller: Caller, bucketId: string): Promise<BucketRow> {
  // Prepared (see prepared.ts): every presign and bucket-scoped call starts here.
  const [bucket] = await prepared(deps.db, "bucket", (db) =>
    db
      .select()
      .from(buckets)
      .where(and(eq(buckets.id, sql.placeholder("id")), eq(buckets.orgId, sql.placeholder("orgId"))))
      .limit(1)
      .prepare("bucket"),
  ).execute({ id: bucketId, orgId: caller.orgId });
  if (!bucket) throw errors.notFound("Bucket");
  assertBucketAllowed(caller, bucket.id, "The bucket");
  return bucket;
}

/** A restricted key sees its own bucket only. */
const owned: Owned = { table: buckets, id: buckets.id, org: buckets.orgId, bucket: buckets.id, createdAt: buckets.createdAt, noun: "Bucket", what: "The bucket" };

export async function listBuckets(deps: Deps, caller: Caller, q: { limit: number; offset: number }): Promise<Page<Bucket>> {
  deps = { ...deps, db: readDb(deps, caller.orgId) };
  const { rows, total } = await visiblePage(deps.db, caller, owned, deps.db.select().from(buckets).$dynamic(), q);
  return page(rows.map(view), total, q.offset);
}

export async function getBucket(deps: Deps, caller: Caller, id: string): Promise<Bucket> {
  return view(await resolveBucket({ ...deps, db: readDb(deps, caller.orgId) }, caller, id));
}

export async function createBucket(deps: Deps, caller: Caller, input: { name: string }): Promise<Bucket> {
  const at = deps.clock.now();
  const row = await deps.db.transaction(async (tx) => {
    const [created] = await tx.insert(buckets).values({ orgId: caller.orgId, name: input.name, createdAt: at }).onConflictDoNothing().returning();
    if (!created) throw errors.conflict(`A bucket named '${input.name}' already exists`);
    await emitEvent(tx, { orgId: caller.orgId, type: "bucket.created", at, data: { bucketId: created.id, name: created.name } });
    return created;
  });
  deps.jobs.kick();
  return view(row);
}

/** 409 while the bucket holds live objects: they must be deleted first. */
export async function deleteBucket(deps: Deps, caller: Caller, id: string): Promise<Deleted> {
  const pending = await deps.db.transaction(async (tx) => {
    // The organization's usage row first, the order of every writer of its counters (a fold
    // of storage deltas updates this bucket's count with that row held).
    await tx.select({ orgId: orgUsage.orgId }).from(orgUsage).where(eq(orgUsage.orgId, caller.orgId)).for("no key update");
    // Lock the bucket row so no upload can be confirmed into it while we decide.
    const [bucket] = await tx
      .select()
      .from(buckets)
      .where(and(eq(buckets.id, id), eq(buckets.orgId, caller.orgId)))
      .for("update");
    if (!bucket) throw errors.notFound("Bucket");
    const [{ live } = { live: 0 }] = await tx
      .select({ live: count() })
      .from(mediaObjects)
      .where(and(eq(mediaObjects.bucketId, id), isNull(mediaObjects.deletedAt)));
    if (live > 0) throw errors.conflict(`Bucket is not empty: it holds ${live} object(s)`, { objectCount: live });
    // Unconfirmed uploads give their reservations back; soft-deleted objects' bytes and any
    // derivatives are removed by the purge job once the bucket is gone.
    const pending = await tx.delete(uploadReservations).where(eq(uploadReservations.bucketId, id)).returning();
    await releaseReservation(tx, caller.orgId, pending.reduce((n, r) => n + r.bytes, 0));
    await enqueueJob(tx, "buckets.purge", { orgId: caller.orgId, bucketId: id });
    await tx.delete(buckets).where(eq(buckets.id, id));
    await emitEvent(tx, { orgId: caller.orgId, type: "bucket.deleted", at: deps.clock.now(), data: { bucketId: id, name: bucket.name } });
    return pending;
  });
  deps.jobs.kick();
  // Keys restricted to the bucket were deleted with it (foreign key cascade).
  await deps.credentials?.forget({ bucketId: id });
  for (const r of pending) {
    if (!r.uploadId) continue;
    await deps.storage.abortMultipart(objectPath(id, r.key), r.uploadId).catch((err) => deps.log.warn("abort failed", { uploadId: r.uploadId, error: String(err) }));
  }
  return { id, deleted: true };
}
