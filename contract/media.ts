import { z } from "zod";
import { id, listOf, timestamp } from "./common.ts";
import { label } from "./labels.ts";

export const MEDIA_KINDS = ["image", "video", "audio", "pdf", "3d", "other"] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** Where a derivative (the thumbnail) stands: pending while the worker makes it. */
export const DERIVATIVE_STATES = ["pending", "ready", "failed", "unsupported"] as const;
export type DerivativeState = (typeof DERIVATIVE_STATES)[number];

export const thumbnailSummary = z
  .object({
    state: z.enum(DERIVATIVE_STATES).describe("pending: being made; ready: media_thumbnail (GET /api/media/{id}/thumbnail) serves it; failed or unsupported: there is none"),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    contentType: z.string().nullable(),
    etag: z.string().nullable().describe("Changes whenever the thumbnail changes; pass it as ?v= to cache the thumbnail URL for good"),
    path: z.string().optional().describe("When ready: a signed path on this service serving the thumbnail without a credential, for a day or more"),
  })
  .meta({ id: "ThumbnailSummary" });
export type ThumbnailSummary = z.output<typeof thumbnailSummary>;

/** Metadata values as stored: the input rules (how many keys, how long) are the tool's. */
export const metadataValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const mediaObject = z
  .object({
    id: id("Media object"),
    bucketId: id("Bucket"),
    key: z.string(),
    fileName: z.string().describe("Last segment of the key"),
    size: z.number().int().describe("Bytes, as measured in storage at confirm"),
    contentType: z.string(),
    kind: z.enum(MEDIA_KINDS),
    etag: z.string().nullable(),
    metadata: z.record(z.string(), metadataValue).describe("Your metadata"),
    info: z.record(z.string(), z.unknown()).describe("Facts the worker extracted: dimensions, duration, pages, EXIF"),
    thumbnail: thumbnailSummary
      .nullable()
      .describe("The thumbnail (image, video poster, PDF first page, audio waveform); null for objects confirmed before thumbnails existed"),
    tags: z.array(label),
    categories: z.array(label),
    createdAt: timestamp("Creation time"),
    updatedAt: timestamp("Last change"),
  })
  .meta({ id: "MediaObject" });
export type MediaObject = z.output<typeof mediaObject>;

/** media_list's page; with `folder`, the folder's subfolders beside its objects. */
export const mediaObjectList = listOf(mediaObject)
  .extend({ folders: z.array(z.string()).optional().describe("With folder: its subfolders' names, sorted") })
  .meta({ id: "MediaObjectList" });

/** A ready thumbnail, as `media_thumbnail` describes it beside its bytes. */
export const thumbnail = z
  .object({
    objectId: id("Media object"),
    bucketId: id("Bucket"),
    variant: z.literal("thumbnail"),
    contentType: z.string(),
    width: z.number().int(),
    height: z.number().int(),
    size: z.number().int().describe("Bytes"),
    etag: z.string(),
    updatedAt: timestamp("When the thumbnail was made"),
  })
  .meta({ id: "Thumbnail" });
export type Thumbnail = z.output<typeof thumbnail>;

/** Most objects one bulk call names by id, or reaches through a filter. */
export const BULK_MAX = 1000;

/** What a bulk call did to one object: each object changes in a transaction of its own, wholly or not at all. */
export const bulkOutcome = z
  .object({
    id: id("Media object"),
    status: z.enum(["done", "not_found", "refused"]).describe("refused: see code and message; nothing of it changed"),
    code: z.string().optional().describe("The error code a single call would have answered"),
    message: z.string().optional(),
    key: z.string().optional().describe("The key after a move"),
  })
  .meta({ id: "BulkOutcome" });
export type BulkOutcome = z.output<typeof bulkOutcome>;

export const bulkResult = z
  .object({
    results: z.array(bulkOutcome),
    done: z.number().int(),
    failed: z.number().int(),
    remaining: z.number().int().describe("Objects of the filter after this call's last one: call again with cursor"),
    cursor: z.string().nullable().describe("Pass back to continue the filter; null when nothing remains"),
  })
  .meta({ id: "BulkResult" });
export type BulkResult = z.output<typeof bulkResult>;
