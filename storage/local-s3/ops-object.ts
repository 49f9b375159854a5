// Object operations: Put / Get / Head / Delete / Copy and object tagging.

import type { Ctx, S3Response } from "./context.ts";
import { MAX_XML_BODY } from "./context.ts";
import { Errors, S3Error } from "./errors.ts";
import { readRange } from "./files.ts";
import { checkConditions, emptyResponse, fieldsFromHeaders, fileBody, isoDate, objectHeaders, parseRange, servingHeaders, xmlResponse } from "./http.ts";
import { bodyLimit, expectedMd5, Payload } from "./payload.ts";
import { decodeComponent } from "./sigv4.ts";
import type { ObjectFields, ObjectMeta } from "./store.ts";
import { parseTaggingHeader, parseTaggingXml, taggingXml, type TagSet } from "./tags.ts";
import { xmlDocument } from "./xml.ts";

export function validateKey(key: string): void {
  if (Buffer.byteLength(key) > 1024) throw new S3Error("KeyTooLongError", "Your key is too long", 400, { Size: String(Buffer.byteLength(key)), MaxSizeAllowed: "1024" });
}

/**
 * The headers a presigned request may store with the object: only those its URL signed. A
 * request signed in its Authorization header comes from a holder of the storage credential,
 * whose clients (the AWS SDK) leave Cache-Control unsigned by design: all of it is taken.
 */
export function presignedHeaders(ctx: Ctx): readonly string[] | undefined {
  return ctx.auth.presigned ? ctx.auth.signedHeaders : undefined;
}

export function fieldsWithTags(headers: Headers, signed?: readonly string[]): ObjectFields {
  const tagging = headers.get("x-amz-tagging");
  return { ...fieldsFromHeaders(headers, signed), tags: tagging === null ? [] : parseTaggingHeader(tagging) };
}

/** Conditional writes (If-None-Match: * / If-Match: etag), checked again at publish time. */
function writeCondition(headers: Headers, key: string): (current: ObjectMeta | undefined) => void {
  const ifNoneMatch = headers.get("if-none-match");
  const ifMatch = headers.get("if-match");
  if (ifNoneMatch !== null && ifNoneMatch.trim() !== "*") throw Errors.notImplemented("If-None-Match on PUT only supports *");
  return (current) => {
    if (ifNoneMatch !== null && current) throw Errors.preconditionFailed("If-None-Match");
    if (ifMatch !== null) {
      if (!current) throw Errors.noSuchKey(key);
      checkConditions(current, headers);
    }
  };
}

export async function putObject(ctx: Ctx): Promise<S3Response> {
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  validateKey(ctx.key);
  const fields = fieldsWithTags(ctx.req.headers, presignedHeaders(ctx));
  const md5 = expectedMd5(ctx.req.headers);
  const condition = writeCondition(ctx.req.headers, ctx.key);
  condition(ctx.store.getObject(ctx.bucket, ctx.key)); // fail before streaming the body
  // Refused up front when the declared length is over the limit, else as soon as the body passes it.
  const payload = new Payload(ctx.req, ctx.auth, bodyLimit(ctx));
  const tmp = await ctx.store.writeTemp(payload.chunks());
  try {
    if (md5 !== undefined && md5 !== tmp.md5) throw Errors.badDigest();
    const meta = await ctx.store.putObject(ctx.bucket, ctx.key, tmp, fields, tmp.md5, condition);
    return emptyResponse(200, { etag: `"${meta.etag}"` });
  } catch (e) {
    await ctx.store.discard(tmp);
    throw e;
  }
}

function rejectVersions(ctx: Ctx): void {
  const v = ctx.query.get("versionId");
  if (v !== undefined && v !== "null") throw Errors.notImplemented("Object versioning is not supported");
}

export async function getObject(ctx: Ctx, head: boolean): Promise<S3Response> {
  rejectVersions(ctx);
  if (ctx.query.has("partNumber")) throw Errors.notImplemented("GetObject by partNumber is not supported");
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  // GET opens the file first and answers from the version it opened, so headers and bytes agree.
  let meta: ObjectMeta | undefined;
  let fh: Awaited<ReturnType<typeof ctx.store.openObject>>["fh"] | undefined;
  if (head) {
    meta = ctx.store.getObject(ctx.bucket, ctx.key);
    if (!meta) throw Errors.noSuchKey(ctx.key);
  } else ({ meta, fh } = await ctx.store.openObject(ctx.bucket, ctx.key));
  try {
    const headers = objectHeaders(meta, ctx.query);
    servingHeaders(headers);
    if (checkConditions(meta, ctx.req.headers) === "not-modified") {
      await fh?.close();
      return { status: 304, headers: { etag: headers.etag!, "last-modified": headers["last-modified"]! } };
    }
    const range = parseRange(ctx.req.headers.get("range"), meta.size);
    const start = range?.start ?? 0;
    const end = range ? range.end + 1 : meta.size;
    headers["content-length"] = String(end - start);
    if (range) headers["content-range"] = `bytes ${range.start}-${range.end}/${meta.size}`;
    const status = range ? 206 : 200;
    if (!fh || end === start) {
      await fh?.close();
      return { status, headers };
    }
    return { status, headers, body: fileBody(fh, start, end) };
  } catch (e) {
    await fh?.close().catch(() => {});
    throw e;
  }
}

export async function deleteObject(ctx: Ctx): Promise<S3Response> {
  rejectVersions(ctx);
  await ctx.store.deleteObject(ctx.bucket, ctx.key);
  return emptyResponse(204);
}

function parseCopySource(value: string): { bucket: string; key: string } {
  const raw = value.split("?")[0]!.replace(/^\//, "");
  if (/[?&]versionId=(?!null(&|$))/.test(value)) throw Errors.notImplemented("Copying a specific version is not supported");
  const slash = raw.indexOf("/");
  if (slash <= 0 || slash === raw.length - 1) throw Errors.invalidArgument("Invalid copy source object key", "x-amz-copy-source", value);
  return { bucket: decodeComponent(raw.slice(0, slash), false), key: decodeComponent(raw.slice(slash + 1), false) };
}

export async function copyObject(ctx: Ctx): Promise<S3Response> {
  const headers = ctx.req.headers;
  const src = parseCopySource(headers.get("x-amz-copy-source")!);
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  if (!ctx.store.bucket(src.bucket)) throw Errors.noSuchBucket(src.bucket);
  validateKey(ctx.key);
  const directive = headers.get("x-amz-metadata-directive") ?? "COPY";
  const tagDirective = headers.get("x-amz-tagging-directive") ?? "COPY";
  if (directive !== "COPY" && directive !== "REPLACE") throw Errors.invalidArgument("Unknown metadata directive.", "x-amz-metadata-directive", directive);
  if (tagDirective !== "COPY" && tagDirective !== "REPLACE") throw Errors.invalidArgument("Unknown tagging directive.", "x-amz-tagging-directive", tagDirective);
  if (src.bucket === ctx.bucket && src.key === ctx.key && directive === "COPY" && tagDirective === "COPY")
    throw Errors.invalidRequest(
      "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
    );
  const replaced = directive === "REPLACE" ? fieldsFromHeaders(headers, presignedHeaders(ctx)) : undefined;
  const newTags: TagSet | undefined = tagDirective === "REPLACE" ? parseTaggingHeader(headers.get("x-amz-tagging") ?? "") : undefined;

  const { meta: source, fh } = await ctx.store.openObject(src.bucket, src.key);
  let tmp;
  try {
    checkConditions(source, headers, "x-amz-copy-source-");
    tmp = await ctx.store.writeTemp(readRange(fh, 0, source.size));
  } finally {
    await fh.close();
  }
  const { contentType, headers: stored, metadata } = replaced ?? source;
  const fields: ObjectFields = { contentType, headers: stored, metadata, tags: newTags ?? source.tags };
  try {
    const meta = await ctx.store.putObject(ctx.bucket, ctx.key, tmp, fields);
    return xmlResponse(xmlDocument("CopyObjectResult", { LastModified: isoDate(meta.lastModified), ETag: `"${meta.etag}"` }));
  } catch (e) {
    await ctx.store.discard(tmp);
    throw e;
  }
}

export async function putObjectTagging(ctx: Ctx): Promise<S3Response> {
  rejectVersions(ctx);
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  if (!ctx.store.getObject(ctx.bucket, ctx.key)) throw Errors.noSuchKey(ctx.key);
  const body = (await new Payload(ctx.req, ctx.auth, MAX_XML_BODY).readAll()).toString("utf8");
  await ctx.store.setTags(ctx.bucket, ctx.key, parseTaggingXml(body));
  return emptyResponse(200);
}

export function getObjectTagging(ctx: Ctx): S3Response {
  rejectVersions(ctx);
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  const meta = ctx.store.getObject(ctx.bucket, ctx.key);
  if (!meta) throw Errors.noSuchKey(ctx.key);
  return xmlResponse(taggingXml(meta.tags));
}

export async function deleteObjectTagging(ctx: Ctx): Promise<S3Response> {
  rejectVersions(ctx);
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  await ctx.store.setTags(ctx.bucket, ctx.key, []);
  return emptyResponse(204);
}
