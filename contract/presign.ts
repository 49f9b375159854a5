import { z } from "zod";
import { id, timestamp } from "./common.ts";

/** What the presign tools answer. Uploads go straight to storage: send the signed headers unchanged. */

const headers = z
  .record(z.string(), z.string())
  .describe(
    "Send every one of these headers unchanged with the PUT: they are signed, and storage refuses a PUT without them. " +
      "Content-Type; If-None-Match or If-Match, so the URL works for one PUT; x-amz-tagging when tags were given. " +
      "Never a Content-Length: the body may be shorter than a declared size",
  );

export const presignedUpload = z
  .object({
    url: z.string(),
    method: z.literal("PUT"),
    key: z.string(),
    bucketId: id("Bucket"),
    bucket: z.string().describe("Bucket name"),
    expiresIn: z.number().int().describe("Seconds the URL stays valid"),
    expiresAt: timestamp("URL expiry"),
    headers,
  })
  .meta({ id: "PresignedUpload" });
export type PresignedUpload = z.output<typeof presignedUpload>;

export const multipartUpload = z
  .object({ uploadId: z.string(), bucketId: id("Bucket"), key: z.string(), bucket: z.string(), contentType: z.string() })
  .meta({ id: "MultipartUpload" });
export type MultipartUpload = z.output<typeof multipartUpload>;

export const presignedPart = z
  .object({ url: z.string(), method: z.literal("PUT"), partNumber: z.number().int(), expiresIn: z.number().int(), headers })
  .meta({ id: "PresignedPart" });
export type PresignedPart = z.output<typeof presignedPart>;

export const completedUpload = z
  .object({ bucketId: id("Bucket"), key: z.string(), uploadId: z.string(), etag: z.string().nullable(), parts: z.number().int() })
  .meta({ id: "CompletedUpload" });
export type CompletedUpload = z.output<typeof completedUpload>;

export const abortedUpload = z
  .object({ bucketId: id("Bucket"), key: z.string(), uploadId: z.string(), aborted: z.literal(true) })
  .meta({ id: "AbortedUpload" });
export type AbortedUpload = z.output<typeof abortedUpload>;

/** A short-lived GET URL: `presign_download` (as an attachment) and `media_stream` (to play in place). */
export const presignedDownload = z
  .object({
    url: z.string(),
    method: z.literal("GET"),
    objectId: id("Media object"),
    key: z.string(),
    expiresIn: z.number().int(),
    expiresAt: timestamp("URL expiry"),
  })
  .meta({ id: "PresignedDownload" });
export type PresignedDownload = z.output<typeof presignedDownload>;
