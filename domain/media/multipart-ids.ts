import { and, eq, lt } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { multipartUploads } from "../../db/schema/index.ts";
import { type AppError, errors } from "../core/errors.ts";

/** How long a multipart upload id is remembered after it was given out. */
export const MULTIPART_ID_MEMORY_MS = 30 * 86_400_000;

/**
 * Records an upload id as given out, in the transaction that reserves its upload; the
 * organization's ids past the memory are forgotten on the way, so the table holds about a
 * month of multipart uploads.
 */
export async function rememberMultipartId(tx: Db, r: { orgId: string; bucketId: string; key: string; uploadId: string; now: Date }): Promise<void> {
  await tx.delete(multipartUploads).where(and(eq(multipartUploads.orgId, r.orgId), lt(multipartUploads.createdAt, new Date(r.now.getTime() - MULTIPART_ID_MEMORY_MS))));
  await tx.insert(multipartUploads).values({ orgId: r.orgId, bucketId: r.bucketId, key: r.key, uploadId: r.uploadId, createdAt: r.now }).onConflictDoNothing();
}

/**
 * What a multipart call on an upload without a reservation gets: 409 conflict when the id was
 * given out for this bucket and key (the upload is closed: its key confirmed, or it was
 * aborted or expired), 404 when this service never issued it there.
 */
export async function closedOrUnknown(db: Db, r: { orgId: string; bucketId: string; key: string; uploadId: string }): Promise<AppError> {
  const [known] = await db
    .select({ createdAt: multipartUploads.createdAt })
    .from(multipartUploads)
    .where(and(eq(multipartUploads.orgId, r.orgId), eq(multipartUploads.uploadId, r.uploadId), eq(multipartUploads.bucketId, r.bucketId), eq(multipartUploads.key, r.key)));
  if (!known) return errors.notFound("Multipart upload");
  return errors.conflict(
    "The multipart upload is closed: it was completed and its key confirmed, or it was aborted or expired. Confirm the key if it was completed; start a new upload to store other bytes",
    { uploadId: r.uploadId },
  );
}
