import { and, asc, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { mediaObjects, mediaSettings, mediaText } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import type { Deps } from "../core/deps.ts";
import { errors } from "../core/errors.ts";
import { resolveLiveObject } from "../media/object-refs.ts";
import { enqueueJob } from "../core/jobs.ts";
import type { MediaKind } from "../media/kind.ts";
import type { ObjectStored } from "../media/lifecycle.ts";
import { touchSearch } from "./index-rows.ts";

/**
 * What the worker reads of a file's text (docs/search.md, "Text inside files"): a PDF's first
 * 200 pages, the first MiB of a plain text file, and at most 200,000 characters of either.
 * A search document (tsvector) must stay under 1 MB; this keeps it far below.
 */
export const TEXT_LIMITS = { pages: 200, chars: 200_000, plainBytes: 1024 * 1024 } as const;

/**
 * OCR reads a greyscale rendition at most 2,000 px on its long edge (the time of one image is
 * bounded whatever its size), and keeps words read with a confidence of 60 (of 100) or more:
 * below that, tesseract's guesses at textures and edges are mostly noise.
 */
export const OCR_LIMITS = { edge: 2000, minConfidence: 60, maxInputPixels: 100_000_000 } as const;

export type TextSource = "pdf" | "text" | "ocr";
export interface TextPage {
  page: number;
  text: string;
}

const TEXT_TYPES = new Set(["application/json", "application/xml", "application/x-ndjson", "application/yaml", "application/x-yaml", "application/csv", "application/javascript", "application/sql"]);
const TEXT_EXTENSIONS = new Set(["txt", "md", "markdown", "csv", "tsv", "json", "ndjson", "log", "xml", "yaml", "yml", "rst", "srt", "vtt", "html", "htm"]);

/** text/*, JSON, CSV, markdown and kin, by content type or (when that says nothing) extension. */
export function isPlainText(contentType: string, key: string): boolean {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type.startsWith("text/") || TEXT_TYPES.has(type) || type.endsWith("+json") || type.endsWith("+xml")) return true;
  if (type && type !== "application/octet-stream" && type !== "binary/octet-stream") return false;
  const ext = key.slice(key.lastIndexOf(".") + 1).toLowerCase();
  return key.includes(".") && TEXT_EXTENSIONS.has(ext);
}

/** Where an object's text comes from; images only by OCR, which the caller asks for (setting or tool). */
export function textSourceOf(object: { kind: MediaKind; contentType: string; key: string }): TextSource | null {
  if (object.kind === "pdf") return "pdf";
  if (object.kind === "image") return "ocr";
  if (object.kind === "other" && isPlainText(object.contentType, object.key)) return "text";
  return null;
}

/**
 * A stored object's text is read by a `media.text` job: PDFs and text files always, images
 * when the organization turned OCR on upload on. One read of the object and the settings, only
 * for the kinds that may need it.
 */
export async function planTextExtraction(e: ObjectStored): Promise<void> {
  const { kind } = e.object;
  if (kind === "pdf") {
    await enqueueJob(e.tx, "media.text", { orgId: e.orgId, objectId: e.object.id });
    return;
  }
  if (kind !== "image" && kind !== "other") return;
  const [row] = rowsOf<{ content_type: string; ocr: boolean | null }>(
    await e.tx.execute(sql`select o.content_type, s.ocr_on_upload as ocr from media_objects o left join media_settings s on s.org_id = o.org_id where o.id = ${e.object.id}`),
  );
  if (!row) return;
  const source = textSourceOf({ kind, contentType: row.content_type, key: e.object.key });
  if (source === "text" || (source === "ocr" && row.ocr)) await enqueueJob(e.tx, "media.text", { orgId: e.orgId, objectId: e.object.id });
}

/** The organization's OCR languages (the setting, default English). */
export async function ocrLanguagesOf(deps: Deps, orgId: string): Promise<string[]> {
  const [row] = await deps.db.select({ langs: mediaSettings.ocrLanguages }).from(mediaSettings).where(eq(mediaSettings.orgId, orgId));
  return row?.langs?.length ? row.langs : ["eng"];
}

/**
 * Replaces an object's text from `source` with `pages` and rewrites its search row, in one
 * transaction, unless the object changed since the text was read (deleted, or new bytes at
 * its key: their own job follows). Returns whether it was recorded.
 */
export async function storeText(deps: Deps, object: { id: string; orgId: string; etag: string | null }, source: TextSource, pages: TextPage[]): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    const [now] = await tx
      .select({ etag: mediaObjects.etag })
      .from(mediaObjects)
      .where(and(eq(mediaObjects.id, object.id), isNull(mediaObjects.deletedAt)))
      .for("no key update");
    if (!now || now.etag !== object.etag) return false;
    await tx.delete(mediaText).where(eq(mediaText.objectId, object.id));
    // An empty page 1 when nothing was found: the object counts as read (a backfill skips it).
    const rows = pages.length ? pages : [{ page: 1, text: "" }];
    await tx.insert(mediaText).values(rows.map((p) => ({ objectId: object.id, orgId: object.orgId, source, page: p.page, text: p.text, etag: object.etag })));
    await touchSearch(tx, deps, object.orgId, [object.id]);
    return true;
  });
}

/** Objects a backfill batch looks at. */
const BACKFILL_BATCH = 200;

export type BackfillScope = { orgId: string; bucketId: string | null; ocr: boolean };
const backfillKind = (s: BackfillScope) => `text:${s.bucketId ?? "all"}${s.ocr ? ":ocr" : ""}`;

/**
 * Starts (or resumes) a text backfill over an organization's objects, or one bucket's: a
 * `search.backfill` job walks them in id order, a batch at a time, queueing a `media.text` job
 * for each object with text to read and none read yet (images only when `ocr`), and keeps the
 * last id done in backfill_runs in the batch's transaction. A run that stops resumes at its
 * cursor; starting a finished one again starts over, which only queues what is still missing.
 * Returns whether an unfinished run was resumed.
 */
export async function startTextBackfill(deps: Deps, scope: BackfillScope): Promise<{ resumed: boolean }> {
  return deps.db.transaction(async (tx) => {
    const kind = backfillKind(scope);
    const [row] = rowsOf<{ cursor: string | null; finished_at: string | null }>(
      await tx.execute(sql`select cursor, finished_at from backfill_runs where org_id = ${scope.orgId} and kind = ${kind} for update`),
    );
    const resumed = Boolean(row && !row.finished_at && row.cursor);
    if (!row) await tx.execute(sql`insert into backfill_runs (org_id, kind) values (${scope.orgId}, ${kind}) on conflict do nothing`);
    else if (row.finished_at) await tx.execute(sql`update backfill_runs set cursor = null, processed = 0, started_at = now(), finished_at = null where org_id = ${scope.orgId} and kind = ${kind}`);
    await enqueueJob(tx, "search.backfill", { ...scope, kind });
    return { resumed };
  });
}

/** One batch of a backfill run; returns true when more remain (the job queues its continuation). */
export async function backfillTextBatch(deps: Deps, job: BackfillScope & { kind: string }): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    const [run] = rowsOf<{ cursor: string | null; finished_at: string | null }>(
      await tx.execute(sql`select cursor, finished_at from backfill_runs where org_id = ${job.orgId} and kind = ${job.kind} for update`),
    );
    // A second job for the same run (started twice) finds it finished or moved on: harmless.
    if (!run || run.finished_at) return false;
    const where = [eq(mediaObjects.orgId, job.orgId), isNull(mediaObjects.deletedAt), inArray(mediaObjects.kind, job.ocr ? ["pdf", "other", "image"] : ["pdf", "other"])];
    if (job.bucketId) where.push(eq(mediaObjects.bucketId, job.bucketId));
    if (run.cursor) where.push(gt(mediaObjects.id, run.cursor));
    const batch = await tx
      .select({ id: mediaObjects.id, kind: mediaObjects.kind, contentType: mediaObjects.contentType, key: mediaObjects.key })
      .from(mediaObjects)
      .where(and(...where))
      .orderBy(asc(mediaObjects.id))
      .limit(BACKFILL_BATCH);
    const candidates = batch.filter((o) => textSourceOf(o) !== null);
    const done = new Set(
      candidates.length
        ? (await tx.selectDistinct({ id: mediaText.objectId }).from(mediaText).where(inArray(mediaText.objectId, candidates.map((o) => o.id)))).map((r) => r.id)
        : [],
    );
    const todo = candidates.filter((o) => !done.has(o.id));
    for (const o of todo) await enqueueJob(tx, "media.text", { orgId: job.orgId, objectId: o.id });
    const more = batch.length === BACKFILL_BATCH;
    await tx.execute(sql`
      update backfill_runs set cursor = ${batch.at(-1)?.id ?? run.cursor}, processed = processed + ${todo.length},
        finished_at = ${more ? null : sql`now()`}
      where org_id = ${job.orgId} and kind = ${job.kind}`);
    if (more) await enqueueJob(tx, "search.backfill", job);
    return more;
  });
}

/**
 * On demand (media_text_extract): one object's text is read again now (images by OCR, whatever
 * the setting), or a backfill starts over a bucket or, without either, the caller's reach
 * (the organization, or a restricted key's bucket), OCR of images included.
 */
export async function requestTextExtraction(
  deps: Deps,
  caller: Caller,
  input: { id?: string | undefined; bucketId?: string | undefined },
): Promise<{ scope: "object" | "bucket" | "organization"; resumed: boolean }> {
  if (input.id && input.bucketId) throw errors.validation([{ path: "bucketId", message: "Give an object id or a bucketId, not both" }]);
  if (input.id) {
    const object = await resolveLiveObject(deps.db, caller, input.id);
    if (!textSourceOf(object)) throw errors.validation([{ path: "id", message: `No text is read from ${object.kind} files of type ${object.contentType}: PDFs, text files and images only` }]);
    await enqueueJob(deps.db, "media.text", { orgId: caller.orgId, objectId: object.id });
    return { scope: "object", resumed: false };
  }
  const bucketId = input.bucketId ? (await resolveBucket(deps, caller, input.bucketId)).id : caller.bucketId;
  const { resumed } = await startTextBackfill(deps, { orgId: caller.orgId, bucketId, ocr: true });
  return { scope: bucketId ? "bucket" : "organization", resumed };
}
