// Multipart upload operations.

import type { Ctx, S3Response } from "./context.ts";
import { MAX_XML_BODY } from "./context.ts";
import { Errors } from "./errors.ts";
import { emptyResponse, isoDate, xmlResponse } from "./http.ts";
import { compareKeys, listKeys } from "./listing.ts";
import { MAX_PARTS } from "./multipart.ts";
import { fieldsWithTags, presignedHeaders, validateKey } from "./ops-object.ts";
import { bodyLimit, expectedMd5, Payload } from "./payload.ts";
import { uriEncode } from "./sigv4.ts";
import { childrenNamed, childText, parseXml, xmlDocument, type XmlObject } from "./xml.ts";

const OWNER = { ID: "02d6176db174dc93cb1b899f7c6078f08654445fe8cf1b6ce98d8855f66bdbf4", DisplayName: "local-s3" };

function intParam(ctx: Ctx, name: string, def: number, min: number, max: number): number {
  const v = ctx.query.get(name);
  if (v === undefined) return def;
  if (!/^\d+$/.test(v) || Number(v) < min) throw Errors.invalidArgument(`Provided ${name} not an integer or within integer range`, name, v);
  return Math.min(Number(v), max);
}

export async function createMultipartUpload(ctx: Ctx): Promise<S3Response> {
  validateKey(ctx.key);
  const info = await ctx.uploads.create(ctx.bucket, ctx.key, fieldsWithTags(ctx.req.headers, presignedHeaders(ctx)));
  return xmlResponse(xmlDocument("InitiateMultipartUploadResult", { Bucket: ctx.bucket, Key: ctx.key, UploadId: info.uploadId }));
}

export async function uploadPart(ctx: Ctx): Promise<S3Response> {
  const n = ctx.query.get("partNumber")!;
  if (!/^\d+$/.test(n) || Number(n) < 1 || Number(n) > MAX_PARTS)
    throw Errors.invalidArgument("Part number must be an integer between 1 and 10000, inclusive", "partNumber", n);
  const upload = ctx.uploads.get(ctx.bucket, ctx.key, ctx.query.get("uploadId")!);
  const md5 = expectedMd5(ctx.req.headers);
  const tmp = await ctx.store.writeTemp(new Payload(ctx.req, ctx.auth, bodyLimit(ctx)).chunks());
  try {
    if (md5 !== undefined && md5 !== tmp.md5) throw Errors.badDigest();
    const part = await ctx.uploads.putPart(upload, Number(n), tmp);
    return emptyResponse(200, { etag: `"${part.etag}"` });
  } catch (e) {
    await ctx.store.discard(tmp);
    throw e;
  }
}

export function listParts(ctx: Ctx): S3Response {
  const uploadId = ctx.query.get("uploadId")!;
  const upload = ctx.uploads.get(ctx.bucket, ctx.key, uploadId);
  const maxParts = intParam(ctx, "max-parts", 1000, 0, 1000);
  const marker = intParam(ctx, "part-number-marker", 0, 0, Number.MAX_SAFE_INTEGER);
  const after = ctx.uploads.listParts(upload).filter((p) => p.partNumber > marker);
  const page = after.slice(0, maxParts);
  const truncated = after.length > page.length;
  return xmlResponse(
    xmlDocument("ListPartsResult", {
      Bucket: ctx.bucket,
      Key: ctx.key,
      UploadId: uploadId,
      Initiator: OWNER,
      Owner: OWNER,
      StorageClass: "STANDARD",
      PartNumberMarker: marker,
      NextPartNumberMarker: page.length > 0 ? page[page.length - 1]!.partNumber : marker,
      MaxParts: maxParts,
      IsTruncated: truncated,
      Part: page.map((p) => ({ PartNumber: p.partNumber, LastModified: isoDate(p.lastModified), ETag: `"${p.etag}"`, Size: p.size })),
    }),
  );
}

export async function completeMultipartUpload(ctx: Ctx): Promise<S3Response> {
  const upload = ctx.uploads.get(ctx.bucket, ctx.key, ctx.query.get("uploadId")!);
  const root = parseXml((await new Payload(ctx.req, ctx.auth, MAX_XML_BODY).readAll()).toString("utf8"));
  if (root.name !== "CompleteMultipartUpload") throw Errors.malformedXML();
  const parts = childrenNamed(root, "Part").map((p) => {
    const n = childText(p, "PartNumber")?.trim();
    const etag = childText(p, "ETag");
    if (n === undefined || !/^\d+$/.test(n) || etag === undefined) throw Errors.malformedXML();
    return { partNumber: Number(n), etag };
  });
  const meta = await ctx.uploads.complete(upload, parts);
  return xmlResponse(
    xmlDocument("CompleteMultipartUploadResult", {
      Location: `${ctx.req.origin}/${ctx.bucket}/${uriEncode(ctx.key, true)}`,
      Bucket: ctx.bucket,
      Key: ctx.key,
      ETag: `"${meta.etag}"`,
    }),
  );
}

export async function abortMultipartUpload(ctx: Ctx): Promise<S3Response> {
  await ctx.uploads.abort(ctx.uploads.get(ctx.bucket, ctx.key, ctx.query.get("uploadId")!));
  return emptyResponse(204);
}

export function listMultipartUploads(ctx: Ctx): S3Response {
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  const prefix = ctx.query.get("prefix") ?? "";
  const delimiter = ctx.query.get("delimiter") ?? "";
  const keyMarker = ctx.query.get("key-marker") ?? "";
  const idMarker = ctx.query.get("upload-id-marker") ?? "";
  const maxUploads = intParam(ctx, "max-uploads", 1000, 0, 1000);
  const all = ctx.uploads.list(ctx.bucket).filter((u) => u.key.startsWith(prefix));
  // Resume after (key-marker, upload-id-marker): later keys, or the same key after that upload.
  let start = 0;
  if (keyMarker !== "") {
    const idx = idMarker === "" ? -1 : all.findIndex((u) => u.key === keyMarker && u.uploadId === idMarker);
    start = idx >= 0 ? idx + 1 : all.findIndex((u) => compareKeys(u.key, keyMarker) > 0);
    if (start < 0) start = all.length;
  }
  const rest = all.slice(start);
  const uploads: XmlObject[] = [];
  const prefixes: XmlObject[] = [];
  let truncated = false;
  let nextKey = "";
  let nextId = "";
  if (delimiter === "") {
    for (const u of rest) {
      if (uploads.length >= maxUploads) {
        truncated = true;
        break;
      }
      uploads.push({ Key: u.key, UploadId: u.uploadId, Initiator: OWNER, Owner: OWNER, StorageClass: "STANDARD", Initiated: isoDate(u.initiated) });
      nextKey = u.key;
      nextId = u.uploadId;
    }
  } else {
    // Group keys under common prefixes with the same algorithm as object listings.
    const keys = [...new Set(rest.map((u) => u.key))];
    const listed = listKeys(keys, { prefix, delimiter, maxKeys: maxUploads });
    truncated = listed.truncated;
    for (const e of listed.entries) {
      if (e.isPrefix) prefixes.push({ Prefix: e.value });
      else
        for (const u of rest.filter((x) => x.key === e.value))
          uploads.push({ Key: u.key, UploadId: u.uploadId, Initiator: OWNER, Owner: OWNER, StorageClass: "STANDARD", Initiated: isoDate(u.initiated) });
      nextKey = e.value;
    }
  }
  return xmlResponse(
    xmlDocument("ListMultipartUploadsResult", {
      Bucket: ctx.bucket,
      KeyMarker: keyMarker,
      UploadIdMarker: idMarker,
      NextKeyMarker: truncated ? nextKey : undefined,
      NextUploadIdMarker: truncated && nextId ? nextId : undefined,
      Prefix: prefix,
      Delimiter: delimiter || undefined,
      MaxUploads: maxUploads,
      IsTruncated: truncated,
      Upload: uploads,
      CommonPrefixes: prefixes,
    }),
  );
}
