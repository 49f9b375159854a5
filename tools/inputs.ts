import { z } from "zod";
import { MAX_OBJECT_KEY_BYTES, objectKeyProblem } from "../domain/media/storage-keys.ts";

/** Input rules several tools share. */

/** Object keys as domain/media/storage-keys.ts rules them: the character bound is cheap and never tighter than the byte one. */
export const objectKey = z
  .string()
  .min(1)
  .max(MAX_OBJECT_KEY_BYTES)
  .superRefine((key, ctx) => {
    const problem = objectKeyProblem(key);
    if (problem) ctx.addIssue({ code: "custom", message: `Object key ${problem}` });
  })
  .describe("Path in the bucket, e.g. a/b.jpg");

/**
 * Upload tags: at most 10 labels of at most 128 characters (docs/conventions.md). Limited to
 * the characters S3 accepts in tag keys, so a real S3 store never refuses the upload later.
 */
export const uploadTags = z
  .array(
    z
      .string()
      .min(1)
      .max(128)
      // A plain space only: \s would let CR, LF, TAB and other breaks into the tagging header.
      .regex(/^[\p{L}\p{N} +\-=._:/@]+$/u, "letters, digits, spaces and + - = . _ : / @ only (no tabs, line breaks or other control characters)"),
  )
  .max(10)
  .describe("Tags, applied at confirm");

/**
 * A content type travels as a signed header to storage, so parameters are printable ASCII: a
 * CR, LF or other control character would make an invalid header and the storage call fail.
 */
export const CONTENT_TYPE_PATTERN = /^[\w.+-]+\/[\w.+-]+( *;[\x20-\x7e]*)?$/;

export const contentType = z
  .string()
  .min(3)
  .max(255)
  .regex(CONTENT_TYPE_PATTERN, "a MIME type such as image/png, parameters in printable ASCII")
  .describe("MIME type; default: by extension");

/** Names of tags and categories: trimmed, 1..max characters, no control characters. */
export const labelName = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((s) => !/\p{Cc}/u.test(s), "Control characters are not allowed");
