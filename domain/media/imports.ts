import { and, eq, sql } from "drizzle-orm";
import type { MediaImport } from "../../contract/imports.ts";
import { mediaImports, uploadReservations } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import { assertBucketAllowed } from "../access/visibility.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import type { Deps } from "../core/deps.ts";
import { AppError, errors } from "../core/errors.ts";
import { enqueueJob } from "../core/jobs.ts";
import type { JobRun } from "../ports/queue.ts";
import { isLastAttempt } from "../ports/queue.ts";
import { isFetchFailure, type UrlFetcher } from "../ports/url-fetcher.ts";
import { releaseReservation, reserveStorage } from "../usage/counters.ts";
import { contentTypeFor } from "./kind.ts";
import { objectPath } from "./storage-keys.ts";
import { recordStoredObject, reserveUploadQuota } from "./uploads.ts";

/**
 * Import by URL: the service fetches a public file into a bucket, for agents that can call
 * tools but cannot make an HTTP request of their own. It is an upload whose bytes come from
 * the worker instead of a client: the declared size is reserved like a presign's, the bytes go
 * to the same place, and the same confirm (recordStoredObject) makes the object, with its tags,
 * derivatives and hooks. What may be fetched (addresses, redirects, size, time) is the
 * fetcher's to enforce (worker/url-fetcher.ts); this file keeps the import's state.
 */

type Row = typeof mediaImports.$inferSelect;

/** A reservation outlives the fetch's deadline by this much, then the sweeper releases it. */
const RESERVATION_GRACE_MS = 60 * 60 * 1000;

const view = (r: Row): MediaImport => ({
  id: r.id,
  bucketId: r.bucketId,
  key: r.key,
  url: r.url,
  state: r.state as MediaImport["state"],
  bytesReceived: r.bytesReceived,
  totalBytes: r.totalBytes,
  contentType: r.contentType,
  objectId: r.objectId,
  error: r.error ?? null,
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

export interface ImportRequest {
  bucketId: string;
  key: string;
  url: string;
  size?: number | undefined;
  contentType?: string | undefined;
  tags?: string[] | undefined;
}

/** Checks the bucket, reserves the declared size (403 quota_exceeded), records the import and queues its job. */
export async function startImport(deps: Deps, caller: Caller, input: ImportRequest): Promise<MediaImport> {
  const bucket = await resolveBucket(deps, caller, input.bucketId);
  const limits = deps.config.imports;
  if (input.size !== undefined && input.size > limits.maxBytes) {
    throw errors.validation([{ path: "size", message: `Imports are limited to ${limits.maxBytes} bytes` }]);
  }
  const now = deps.clock.now();
  await reserveUploadQuota(deps, caller.orgId, {
    bucketId: bucket.id,
    key: input.key,
    size: input.size,
    contentType: input.contentType ?? contentTypeFor(input.key),
    tags: input.tags ?? [],
    lifetimeMs: limits.timeoutMs + RESERVATION_GRACE_MS,
    // The reservation is found again by (bucket, key, createdAt): one instant for both rows.
    now,
  });
  try {
    const row = await deps.db.transaction(async (tx) => {
      const [created] = await tx
        .insert(mediaImports)
        .values({
          orgId: caller.orgId,
          bucketId: bucket.id,
          key: input.key,
          url: input.url,
          declaredSize: input.size ?? null,
          declaredContentType: input.contentType ?? null,
          totalBytes: input.size ?? null,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      await enqueueJob(tx, "media.import", { orgId: caller.orgId, importId: created!.id });
      return created!;
    });
    deps.jobs.kick();
    return view(row);
  } catch (err) {
    await releaseImportReservation(deps, caller.orgId, bucket.id, input.key, now);
    throw err;
  }
}

/** An import of the caller's organization (404 otherwise), in a bucket its key may reach (403 otherwise). */
export async function getImport(deps: Deps, caller: Caller, id: string): Promise<MediaImport> {
  const [row] = await deps.db.select().from(mediaImports).where(and(eq(mediaImports.id, id), eq(mediaImports.orgId, caller.orgId)));
  if (!row) throw errors.notFound("Import");
  assertBucketAllowed(caller, row.bucketId, "The import's bucket");
  return view(row);
}

async function releaseImportReservation(deps: Deps, orgId: string, bucketId: string, key: string, createdAt: Date): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const released = await tx
      .delete(uploadReservations)
      .where(and(eq(uploadReservations.bucketId, bucketId), eq(uploadReservations.key, key), eq(uploadReservations.createdAt, createdAt)))
      .returning({ bytes: uploadReservations.bytes });
    await releaseReservation(tx, orgId, released.reduce((n, r) => n + r.bytes, 0));
  });
}

const update = (deps: Deps, id: string, fields: Partial<Row>) =>
  deps.db.update(mediaImports).set({ ...fields, updatedAt: deps.clock.now() }).where(eq(mediaImports.id, id));

/** Same type and subtype, parameters aside. */
const sameType = (a: string, b: string) => a.split(";")[0]!.trim().toLowerCase() === b.split(";")[0]!.trim().toLowerCase();

/**
 * The job: fetch, check, store, confirm. A failure of the remote side (refused address, error
 * status, too large, too slow, wrong type, over quota) is final and recorded; a failure of ours
 * (storage, database) is thrown for the queue to retry, and recorded on the last attempt.
 */
export async function runImport(deps: Deps, fetcher: UrlFetcher, importId: string, run: JobRun): Promise<void> {
  const [row] = await deps.db.select().from(mediaImports).where(eq(mediaImports.id, importId));
  if (!row || row.state === "stored" || row.state === "failed") return;
  const fail = async (code: string, message: string) => {
    await update(deps, row.id, { state: "failed", error: { code, message } });
    await releaseImportReservation(deps, row.orgId, row.bucketId, row.key, row.createdAt);
    deps.log.info("import failed", { importId: row.id, code, message });
  };
  await update(deps, row.id, { state: "fetching", bytesReceived: 0, error: null });
  let reserved = row.declaredSize ?? 0;
  let contentType: string | null = null;
  let lastReport = 0;
  let file;
  try {
    file = await fetcher.fetch(row.url, {
      maxBytes: deps.config.imports.maxBytes,
      timeoutMs: deps.config.imports.timeoutMs,
      minRate: deps.config.imports.minRate,
      maxRedirects: deps.config.imports.maxRedirects,
      onHeaders: async (h) => {
        contentType = h.contentType;
        if (row.declaredContentType && h.contentType && h.contentType !== "application/octet-stream" && !sameType(h.contentType, row.declaredContentType)) {
          throw new AppError("validation_error", `The URL answered ${h.contentType}, not the declared ${row.declaredContentType}`);
        }
        if (!row.declaredContentType && h.contentType === "text/html") {
          throw new AppError("validation_error", "The URL answered a web page (text/html), not a file; declare contentType text/html to import the page itself");
        }
        // A size learnt from the answer is reserved like a declared one, before any byte is kept.
        if (h.contentLength !== null && h.contentLength > reserved) {
          const extra = h.contentLength - reserved;
          // The reservation row grows first: the organization's counter only grows with a row
          // that will give the bytes back (at confirm, failure or expiry), never on its own.
          await deps.db.transaction(async (tx) => {
            const held = await tx
              .update(uploadReservations)
              .set({ bytes: sql`${uploadReservations.bytes} + ${extra}` })
              .where(and(eq(uploadReservations.bucketId, row.bucketId), eq(uploadReservations.key, row.key), eq(uploadReservations.createdAt, row.createdAt)))
              .returning({ id: uploadReservations.id });
            if (held.length > 0) await reserveStorage(tx, row.orgId, extra);
          });
          reserved = h.contentLength;
        }
        await update(deps, row.id, { totalBytes: h.contentLength ?? row.declaredSize, contentType: h.contentType });
      },
      onProgress: (bytes) => {
        const now = Date.now();
        if (now - lastReport < 500) return;
        lastReport = now;
        void update(deps, row.id, { bytesReceived: bytes }).catch(() => undefined);
      },
    });
  } catch (err) {
    if (isFetchFailure(err)) return fail(err.code, err.message);
    if (err instanceof AppError && (err.code === "validation_error" || err.code === "quota_exceeded")) return fail(err.code, err.message);
    if (isLastAttempt(run)) await fail("internal_error", "The import could not be completed");
    throw err;
  }
  try {
    const type = row.declaredContentType ?? contentType ?? contentTypeFor(row.key);
    await deps.storage.put(objectPath(row.bucketId, row.key), file.blob(), { contentType: type });
    const objectId = await recordStoredObject(deps, row.orgId, row.bucketId, row.key);
    await update(deps, row.id, { state: "stored", objectId, bytesReceived: file.size, totalBytes: file.size, contentType: type });
  } catch (err) {
    // Bytes that did not fit the allocation (a size learnt only by reading, with no
    // Content-Length to reserve by) were deleted at confirm; fetching them again changes nothing.
    if (err instanceof AppError && err.code === "quota_exceeded") return fail(err.code, err.message);
    if (isLastAttempt(run)) await fail("internal_error", "The file was fetched but could not be stored");
    throw err;
  } finally {
    await file.discard();
  }
}
