import { eq, sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { type CountedParts, uploadReservations } from "../../db/schema/index.ts";
import type { Deps } from "../core/deps.ts";
import { within } from "../core/within.ts";
import type { UploadedPart } from "../ports/storage.ts";
import { pendingStorage, unconfirmedExtra, uploadRefusal } from "../usage/counters.ts";
import { closedOrUnknown } from "./multipart-ids.ts";

/** S3's largest part. */
const MAX_PART_BYTES = 5 * 1024 ** 3;
/** Parts S3 allows in one upload. */
const MAX_PARTS = 10_000;
/** Part URLs left unmeasured at most; past this many, the parts are measured first (the row stays small). */
const MAX_PENDING = 64;
/** Longest wait for storage's list of parts; then the count goes on without it, as it stood. */
const LIST_PARTS_MS = 2000;
const MiB = 1024 ** 2;

type Reservation = typeof uploadReservations.$inferSelect;

/**
 * The most bytes one part URL of an upload may carry: UPLOAD_UNSIZED_MAX_BYTES, or more when
 * the declared size needs larger parts to fit in 10,000 (rounded up to the MiB, as the CLI
 * picks its part size), never more than S3's 5 GiB.
 */
export function partMaximum(unsizedMax: number, declared: number): number {
  return Math.min(MAX_PART_BYTES, Math.max(unsizedMax, Math.ceil(declared / MAX_PARTS / MiB) * MiB));
}

const pendingTotal = (parts: CountedParts, except?: string) => Object.entries(parts.pending).reduce((n, [k, v]) => (k === except ? n : n + v), 0);

/**
 * Counts a part URL about to be signed and answers the most bytes it may carry, which the
 * caller signs into it where storage enforces a maximum (the embedded node); or refuses with
 * 403 quota_exceeded when the organization has too much unconfirmed.
 *
 * A multipart upload counts the greater of its declared size and its parts: those measured in
 * storage (ListParts) at their size, and every part URL given out since at the most it may
 * carry. That most is the part maximum (partMaximum), or less when the organization's room
 * under the unconfirmed bound (unconfirmedFits) is smaller, so an upload near a full
 * allocation goes on with smaller parts (a last part, a small file) instead of being refused;
 * with no room at all it is refused.
 * Parts are measured before counting one that would take the upload past its declared size,
 * or when many went unmeasured: a client sending parts in turn keeps about as many counted at
 * their maximum as it has in flight. Storage that does not list them within 2 s leaves the
 * count as it stood, which only counts more.
 *
 * Also the upload's idle deadline moves to `expiresAt`, in the same write.
 */
export async function countPart(deps: Deps, r: { orgId: string; reservation: Reservation; path: string; partNumber: number; expiresAt: Date }): Promise<number> {
  const slack = deps.config.uploadUnsizedMaxBytes;
  const n = String(r.partNumber);
  const perPart = partMaximum(slack, r.reservation.bytes);
  const seen = r.reservation.parts ?? { measured: 0, pending: {} };
  // Measured outside any lock: the organization's reservations wait for nothing in storage.
  const measure = seen.measured + pendingTotal(seen, n) + perPart > r.reservation.bytes || Object.keys(seen.pending).length >= MAX_PENDING;
  const listed = measure ? await listedParts(deps, r.path, r.reservation.uploadId!) : null;
  return deps.db.transaction(async (tx) => {
    // The upload row, then the organization's usage row: the order confirm takes them in.
    const [row] = await tx.select().from(uploadReservations).where(eq(uploadReservations.id, r.reservation.id)).for("update");
    if (!row) throw await closedOrUnknown(tx, { orgId: r.orgId, bucketId: r.reservation.bucketId, key: r.reservation.key, uploadId: r.reservation.uploadId! });
    const [usage] = rowsOf<{ free: string | number }>(
      await tx.execute(sql`select allocated_storage - used_storage - reserved_storage as free from org_usage where org_id = ${r.orgId} for update`),
    );
    // A statement of its own, after the lock: it sees every upload row committed by earlier holders.
    const [open] = rowsOf<{ pending: string | number; extra: string | number }>(
      await tx.execute(sql`select ${pendingStorage(r.orgId)} as pending, ${unconfirmedExtra(r.orgId)} as extra`),
    );
    // No parts yet, or an upload an earlier release started (it counted none): counted from here,
    // and the parts it stored are found by the next measure.
    let parts: CountedParts = row.parts ?? { measured: 0, pending: {} };
    if (listed) {
      const stored = new Set(listed.map((p) => String(p.partNumber)));
      parts = {
        // A later measure may have been written meanwhile: the larger is kept (it only counts more).
        measured: Math.max(parts.measured, listed.reduce((sum, p) => sum + p.size, 0)),
        pending: Object.fromEntries(Object.entries(parts.pending).filter(([k]) => !stored.has(k))),
      };
    }
    const countedBefore = Math.max(row.bytes, row.bound ?? 0);
    const room = Number(usage?.free ?? 0) - Number(open?.pending ?? 0) - Number(open?.extra ?? 0) + slack;
    const others = parts.measured + pendingTotal(parts, n);
    const most = Math.min(perPart, Math.max(row.bytes, countedBefore + room) - others);
    if (most < 1) throw await uploadRefusal(tx, r.orgId, { declared: 0, counted: perPart, slack });
    const next: CountedParts = { measured: parts.measured, pending: { ...parts.pending, [n]: Math.max(parts.pending[n] ?? 0, most) } };
    const bound = Math.max(row.bytes, next.measured + pendingTotal(next));
    await tx
      .update(uploadReservations)
      .set({ parts: next, bound: bound > row.bytes ? bound : null, expiresAt: r.expiresAt })
      .where(eq(uploadReservations.id, row.id));
    return most;
  });
}

/** The parts storage holds for the upload, or null when it does not answer within LIST_PARTS_MS (or fails). */
function listedParts(deps: Deps, path: string, uploadId: string): Promise<UploadedPart[] | null> {
  return within(deps.storage.listParts(path, uploadId), LIST_PARTS_MS, null);
}
