import { z } from "zod";
import { DERIVATIVE_STATES } from "../domain/derivatives/derivatives.ts";
import { MEDIA_KINDS } from "../domain/media/kind.ts";
import { MAX_OBJECT_KEY_BYTES, objectKeyProblem } from "../domain/media/storage-keys.ts";
import { id, timestamp } from "./schemas.ts";

/** Object keys per ARCHITECTURE.md (domain/storage-keys.ts): the character bound is cheap and never tighter than the byte one. */
export const objectKey = z
  .string()
  .min(1)
  .max(MAX_OBJECT_KEY_BYTES)
  .superRefine((key, ctx) => {
    const problem = objectKeyProblem(key);
    if (problem) ctx.addIssue({ code: "custom", message: `Object key ${problem}` });
  })
  .describe(`Object key (path) inside the bucket, e.g. 'photos/2026/beach.jpg': at most ${MAX_OBJECT_KEY_BYTES} bytes of UTF-8, no leading '/', no '.' or '..' segment, no control characters`);

/**
 * Upload tags (spec §2, §8): at most 10 labels of at most 128 characters. Limited to the
 * characters S3 accepts in tag keys, so a real S3 store never refuses the upload later.
 */
export const uploadTags = z
  .array(
    z
      .string()
      .min(1)
      .max(128)
      .regex(/^[\p{L}\p{N}\s+\-=._:/@]+$/u, "letters, digits, spaces and + - = . _ : / @ only"),
  )
  .max(10)
  .describe("Up to 10 labels of at most 128 characters; they become the object's tags at confirm");

export const label = z.object({ id: id("Label"), name: z.string(), slug: z.string() });

export const thumbnailSummary = z
  .object({
    state: z.enum(DERIVATIVE_STATES).describe("pending: being made; ready: GET /api/media/{id}/thumbnail serves it; failed or unsupported: there is none"),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    contentType: z.string().nullable(),
    etag: z.string().nullable().describe("Changes whenever the thumbnail changes; pass it as ?v= to cache the thumbnail URL for good"),
  })
  .nullable()
  .describe("The thumbnail (image, video poster, PDF first page, audio waveform); null for objects confirmed before thumbnails existed");

export const mediaObject = z.object({
  id: id("Media object"),
  bucketId: id("Bucket"),
  key: z.string(),
  fileName: z.string().describe("Last segment of the key"),
  size: z.number().int().describe("Bytes, as measured in storage at confirm"),
  contentType: z.string(),
  kind: z.enum(MEDIA_KINDS),
  etag: z.string().nullable(),
  metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).describe("Your metadata"),
  info: z.record(z.string(), z.unknown()).describe("Facts the worker extracted: dimensions, duration, pages, EXIF"),
  thumbnail: thumbnailSummary,
  tags: z.array(label),
  categories: z.array(label),
  createdAt: timestamp("Creation time"),
  updatedAt: timestamp("Last change"),
});

export const contentType = z
  .string()
  .min(3)
  .max(255)
  // It travels as a signed header to storage, so parameters are printable ASCII: a CR, LF or
  // other control character would make an invalid header and the storage call fail.
  .regex(/^[\w.+-]+\/[\w.+-]+( *;[\x20-\x7e]*)?$/, "a MIME type such as image/png, parameters in printable ASCII")
  .describe("MIME type; defaults to one guessed from the key's extension");
