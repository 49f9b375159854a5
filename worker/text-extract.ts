import { and, eq, isNull } from "drizzle-orm";
import { mediaObjects } from "../db/schema/index.ts";
import type { Deps } from "../domain/core/deps.ts";
import { objectPath } from "../domain/media/storage-keys.ts";
import { ocrLanguagesOf, storeText, TEXT_LIMITS, type TextPage, textSourceOf } from "../domain/search/text.ts";
import { MediaError } from "./derivatives/errors.ts";
import { ocrImage } from "./derivatives/ocr.ts";
import { MAX_PDF_BYTES } from "./derivatives/pdf.ts";
import { readSmall } from "./derivatives/source.ts";
import { pdfText, plainText } from "./derivatives/text.ts";

/**
 * The `media.text` job: reads the words inside an object (a PDF's pages, a text file, or an
 * image by OCR) and records them with its search row. Idempotent: the same bytes give the same
 * rows. A file that cannot be read (no PDF, a password, no text) records no text and is not
 * retried: a thumbnail job reports such files already.
 */
export async function extractText(deps: Deps, objectId: string): Promise<void> {
  const [object] = await deps.db.select().from(mediaObjects).where(and(eq(mediaObjects.id, objectId), isNull(mediaObjects.deletedAt)));
  if (!object) return;
  const source = textSourceOf(object);
  if (!source) return;
  const w = deps.config.worker;
  const key = objectPath(object.bucketId, object.key);
  let pages: TextPage[] = [];
  try {
    if (source === "text") {
      const head = await readHead(deps, key, object.etag, TEXT_LIMITS.plainBytes);
      const text = plainText(head);
      pages = text ? [{ page: 1, text }] : [];
    } else {
      const limit = source === "pdf" ? Math.min(MAX_PDF_BYTES, w.maxInputBytes) : w.maxInputBytes;
      if (object.size > limit) return;
      const { bytes } = await readSmall(deps.storage, key, { etag: object.etag, maxBytes: limit });
      if (source === "pdf") pages = await pdfText(bytes, { timeoutMs: w.toolTimeoutMs });
      else {
        const text = await ocrImage(bytes, await ocrLanguagesOf(deps, object.orgId), w.toolTimeoutMs);
        pages = text ? [{ page: 1, text: text.slice(0, TEXT_LIMITS.chars) }] : [];
      }
    }
  } catch (err) {
    if (!(err instanceof MediaError) && !isDecodeError(err)) throw err;
    deps.log.info("no text read from the file", { objectId, reason: err instanceof Error ? err.message : String(err) });
    pages = [];
  }
  await storeText(deps, object, source, pages);
}

/** sharp's refusals of bytes that are no image it can read. */
const isDecodeError = (err: unknown) => err instanceof Error && /unsupported image format|Input buffer|pixel limit|corrupt/i.test(err.message);

/** The first `max` bytes of the object, stopping the download there. */
async function readHead(deps: Deps, key: string, etag: string | null, max: number): Promise<Uint8Array> {
  const got = await deps.storage.get(key);
  if (!got) throw new MediaError("The file is missing from storage");
  if (etag && got.info.etag && got.info.etag !== etag) {
    await got.body.cancel().catch(() => {});
    throw new MediaError("The stored file changed after the upload was confirmed");
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = got.body.getReader();
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, max);
}
