import { z } from "zod";
import { presignDownload } from "../domain/media/media.ts";
import { abortUpload, completeUpload, confirmUpload, createMultipartUpload, presignUpload, presignUploadPart } from "../domain/media/uploads.ts";
import { id } from "../contract/common.ts";
import { mediaObject } from "../contract/media.ts";
import { abortedUpload, completedUpload, multipartUpload, presignedDownload, presignedPart, presignedUpload } from "../contract/presign.ts";
import { defineTool } from "./define.ts";
import { contentType, objectKey, uploadTags } from "./inputs.ts";

const target = { bucketId: id("Bucket"), key: objectKey };
const size = z
  .number()
  .int()
  .min(0)
  .max(5 * 1024 ** 4)
  .describe("Upper bound in bytes, reserved against the quota");
/** Default true; false: conflict (409) when an object holds the key, checked at the start and at complete-upload. */
const overwrite = z.boolean().optional().describe("false: conflict if the key is taken");
/** What both ways of starting an upload take. */
const uploadStart = z.object({ ...target, contentType: contentType.optional(), size: size.optional(), tags: uploadTags.optional(), overwrite });
const uploadId = z.string().min(1).max(1024).describe("From presign_create_multipart");

export const presignTools = [
  defineTool({
    name: "presign_upload",
    title: "Start an upload (presigned PUT)",
    description:
      "Step 1 of an upload: a URL to PUT the bytes to, with exactly the returned headers; then presign_confirm (same bucketId, key). Over ~100 MiB: multipart.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/presign/upload" },
    // The URL overwrites whatever the key holds (no trash entry for the old bytes).
    annotations: { destructiveHint: true },
    input: uploadStart,
    output: presignedUpload,
    errors: ["not_found", "conflict", "quota_exceeded"],
    // The reservation is committed without the flush (reserveSingleShot in domain/media/uploads.ts).
    unflushed: true,
    handler: (input, { deps, caller }) => presignUpload(deps, caller, input),
  }),
  defineTool({
    name: "presign_create_multipart",
    title: "Start a multipart upload",
    description:
      "Starts a multipart upload. Per chunk (5 MiB or more but the last): presign_upload_part, PUT it, keep its ETag; then presign_complete_upload, presign_confirm.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/presign/create-multipart" },
    input: uploadStart,
    output: multipartUpload,
    errors: ["not_found", "conflict", "quota_exceeded"],
    handler: (input, { deps, caller }) => createMultipartUpload(deps, caller, input),
  }),
  defineTool({
    name: "presign_upload_part",
    title: "Presign one part of a multipart upload",
    description: "A URL to PUT one part to; keep its ETag response header for presign_complete_upload.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/presign/upload-part" },
    input: z.object({
      ...target,
      uploadId,
      partNumber: z.number().int().min(1).max(10000).describe("The part's number"),
      contentType: contentType.optional(),
    }),
    output: presignedPart,
    errors: ["not_found", "quota_exceeded"],
    handler: (input, { deps, caller }) => presignUploadPart(deps, caller, input),
  }),
  defineTool({
    name: "presign_complete_upload",
    title: "Complete a multipart upload",
    description:
      "Assembles the parts; `tags` replace those given at the start. Past the declared size and the quota: quota_exceeded, upload aborted. Then presign_confirm.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/presign/complete-upload" },
    annotations: { destructiveHint: true },
    input: z.object({
      ...target,
      uploadId,
      tags: uploadTags.optional(),
      parts: z
        .array(z.object({ partNumber: z.number().int().min(1).max(10000).describe("The part's number"), etag: z.string().min(1).max(256).describe("The ETag its PUT returned") }))
        .min(1)
        .max(10000)
        .optional()
        .describe("The parts to assemble; omit for all uploaded so far, in order"),
      overwrite,
    }),
    output: completedUpload,
    errors: ["not_found", "bad_request", "conflict", "quota_exceeded"],
    handler: (input, { deps, caller }) => completeUpload(deps, caller, input),
  }),
  defineTool({
    name: "presign_abort_multipart",
    title: "Abort a multipart upload",
    description: "Abandons a multipart upload: its parts are discarded, its reserved quota released.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/presign/abort-multipart" },
    annotations: { destructiveHint: true, idempotentHint: false },
    input: z.object({ ...target, uploadId }),
    output: abortedUpload,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => abortUpload(deps, caller, input),
  }),
  defineTool({
    name: "presign_confirm",
    title: "Confirm an upload",
    description:
      "Last step of every upload: measures the bytes, records the object (new, or the one at the key) with its tags. " +
      "Past the declared size and the quota: quota_exceeded, bytes deleted. Safe to repeat.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/presign/confirm" },
    annotations: { destructiveHint: true, idempotentHint: true },
    input: z.object(target),
    output: mediaObject,
    errors: ["not_found", "quota_exceeded"],
    handler: (input, { deps, caller }) => confirmUpload(deps, caller, input),
  }),
  defineTool({
    name: "presign_download",
    title: "Get a download URL",
    description: "A short-lived URL that downloads the object's bytes from storage as a file.",
    scope: "read",
    reach: "bucket",
    http: { method: "POST", path: "/presign/download" },
    annotations: { readOnlyHint: true, idempotentHint: true },
    input: z.object({
      objectId: id("Media object"),
      expiresIn: z.number().int().min(60).max(604800).default(3600).describe("Seconds the URL stays valid"),
    }),
    output: presignedDownload,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => presignDownload(deps, caller, input),
  }),
];
