// Maps (method, bucket/key, subresource) to an operation. Query parameters that
// are not subresources (x-id, prefix, response-*, ...) never change the route;
// a subresource we do not implement gives 501 NotImplemented.

import type { Ctx, S3Response } from "./context.ts";
import { Errors } from "./errors.ts";
import * as B from "./ops-bucket.ts";
import * as M from "./ops-multipart.ts";
import * as O from "./ops-object.ts";

const SUBRESOURCES = new Set([
  "accelerate", "acl", "analytics", "attributes", "cors", "delete", "encryption", "intelligent-tiering",
  "inventory", "legal-hold", "lifecycle", "location", "logging", "metadataTable", "metrics", "notification",
  "object-lock", "ownershipControls", "partNumber", "policy", "policyStatus", "publicAccessBlock", "replication",
  "requestPayment", "restore", "retention", "select", "session", "tagging", "torrent", "uploadId", "uploads",
  "versioning", "versions", "website",
]);

export async function route(ctx: Ctx): Promise<S3Response> {
  const sub = [...ctx.query.keys()].filter((k) => SUBRESOURCES.has(k)).sort().join("&");
  const m = ctx.method;
  const op = `${m} ${sub}`;

  if (ctx.bucket === "") {
    if (op === "GET ") return B.listBuckets(ctx);
    throw Errors.notImplemented();
  }

  if (ctx.key === "") {
    switch (op) {
      case "PUT ":
        return B.createBucket(ctx);
      case "HEAD ":
        return B.headBucket(ctx);
      case "DELETE ":
        return B.deleteBucket(ctx);
      case "GET ":
        return B.listObjects(ctx);
      case "GET location":
        return B.getBucketLocation(ctx);
      case "PUT cors":
        return B.putBucketCors(ctx);
      case "GET cors":
        return B.getBucketCors(ctx);
      case "DELETE cors":
        return B.deleteBucketCors(ctx);
      case "GET uploads":
        return M.listMultipartUploads(ctx);
      case "POST delete":
        return B.deleteObjects(ctx);
    }
    throw Errors.notImplemented();
  }

  const copy = ctx.req.headers.has("x-amz-copy-source");
  switch (op) {
    case "PUT ":
      return copy ? O.copyObject(ctx) : O.putObject(ctx);
    case "GET ":
    case "GET partNumber":
      return O.getObject(ctx, false);
    case "HEAD ":
    case "HEAD partNumber":
      return O.getObject(ctx, true);
    case "DELETE ":
      return O.deleteObject(ctx);
    case "PUT tagging":
      return O.putObjectTagging(ctx);
    case "GET tagging":
      return O.getObjectTagging(ctx);
    case "DELETE tagging":
      return O.deleteObjectTagging(ctx);
    case "POST uploads":
      return M.createMultipartUpload(ctx);
    case "PUT partNumber&uploadId":
      if (copy) throw Errors.notImplemented("UploadPartCopy is not supported");
      return M.uploadPart(ctx);
    case "GET uploadId":
      return M.listParts(ctx);
    case "POST uploadId":
      return M.completeMultipartUpload(ctx);
    case "DELETE uploadId":
      return M.abortMultipartUpload(ctx);
  }
  throw Errors.notImplemented();
}
