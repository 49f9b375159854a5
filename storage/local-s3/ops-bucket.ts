// Service- and bucket-level operations.

import { corsConfigurationXml, parseCorsConfiguration } from "./cors.ts";
import type { Ctx, S3Response } from "./context.ts";
import { MAX_XML_BODY } from "./context.ts";
import { Errors, S3Error } from "./errors.ts";
import { emptyResponse, isoDate, xmlResponse } from "./http.ts";
import { listKeys } from "./listing.ts";
import { Payload } from "./payload.ts";
import { uriEncode } from "./sigv4.ts";
import { childrenNamed, childText, parseXml, xmlDocument, type XmlObject } from "./xml.ts";

const OWNER = { ID: "02d6176db174dc93cb1b899f7c6078f08654445fe8cf1b6ce98d8855f66bdbf4", DisplayName: "local-s3" };

async function readXml(ctx: Ctx): Promise<string> {
  return (await new Payload(ctx.req, ctx.auth, MAX_XML_BODY).readAll()).toString("utf8");
}

export function listBuckets(ctx: Ctx): S3Response {
  return xmlResponse(
    xmlDocument("ListAllMyBucketsResult", {
      Owner: OWNER,
      Buckets: { Bucket: ctx.store.listBuckets().map((b) => ({ Name: b.name, CreationDate: isoDate(b.created) })) },
    }),
  );
}

/**
 * Re-creating a bucket you own answers 409 BucketAlreadyOwnedByYou, as S3 does outside
 * us-east-1 and as MinIO does everywhere, so "ensure bucket" code written for those
 * (catch BucketAlreadyOwnedByYou) works unchanged. The legacy us-east-1 200 is not copied.
 */
export async function createBucket(ctx: Ctx): Promise<S3Response> {
  await readXml(ctx); // optional CreateBucketConfiguration; the location is always our region
  if (!(await ctx.store.createBucket(ctx.bucket)))
    throw new S3Error("BucketAlreadyOwnedByYou", "Your previous request to create the named bucket succeeded and you already own it.", 409, { BucketName: ctx.bucket });
  return emptyResponse(200, { location: `/${ctx.bucket}` });
}

export function headBucket(ctx: Ctx): S3Response {
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  return emptyResponse(200, { "x-amz-bucket-region": ctx.region });
}

export async function deleteBucket(ctx: Ctx): Promise<S3Response> {
  await ctx.store.deleteBucket(ctx.bucket);
  await ctx.uploads.dropBucket(ctx.bucket);
  return emptyResponse(204);
}

export function getBucketLocation(ctx: Ctx): S3Response {
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  return xmlResponse(xmlDocument("LocationConstraint", ctx.region === "us-east-1" ? "" : ctx.region));
}

export async function putBucketCors(ctx: Ctx): Promise<S3Response> {
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  await ctx.store.setCors(ctx.bucket, parseCorsConfiguration(await readXml(ctx)));
  return emptyResponse(200);
}

export function getBucketCors(ctx: Ctx): S3Response {
  const b = ctx.store.bucket(ctx.bucket);
  if (!b) throw Errors.noSuchBucket(ctx.bucket);
  if (!b.cors) throw new S3Error("NoSuchCORSConfiguration", "The CORS configuration does not exist", 404, { BucketName: ctx.bucket });
  return xmlResponse(corsConfigurationXml(b.cors));
}

export async function deleteBucketCors(ctx: Ctx): Promise<S3Response> {
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  await ctx.store.setCors(ctx.bucket, undefined);
  return emptyResponse(204);
}

function parseMax(ctx: Ctx, name: string): number {
  const v = ctx.query.get(name);
  if (v === undefined) return 1000;
  if (!/^\d+$/.test(v)) throw Errors.invalidArgument("Provided max-keys not an integer or within integer range", name, v);
  return Math.min(Number(v), 1000);
}

function encodingType(ctx: Ctx): (s: string) => string {
  const e = ctx.query.get("encoding-type");
  if (e === undefined) return (s) => s;
  if (e !== "url") throw Errors.invalidArgument("Invalid Encoding Method specified in Request", "encoding-type", e);
  return (s) => uriEncode(s, true);
}

interface Token {
  a: string;
  p: boolean;
}

/** ListObjectsV2 (list-type=2) and the original ListObjects (no list-type). */
export function listObjects(ctx: Ctx): S3Response {
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  const v2 = ctx.query.get("list-type") === "2";
  if (ctx.query.has("list-type") && !v2) throw Errors.invalidArgument("Invalid List Type specified in Request", "list-type", ctx.query.get("list-type"));
  const prefix = ctx.query.get("prefix") ?? "";
  const delimiter = ctx.query.get("delimiter") ?? "";
  const maxKeys = parseMax(ctx, "max-keys");
  const enc = encodingType(ctx);
  const token = ctx.query.get("continuation-token");
  const startAfter = ctx.query.get("start-after");
  const marker = ctx.query.get("marker");

  let after: string | undefined;
  let afterIsPrefix = false;
  if (v2 && token !== undefined) {
    try {
      const t = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Token;
      if (typeof t.a !== "string") throw new Error();
      after = t.a;
      afterIsPrefix = t.p === true;
    } catch {
      throw Errors.invalidArgument("The continuation token provided is incorrect", "continuation-token", token);
    }
  } else if (v2) after = startAfter;
  else if (marker !== undefined) {
    after = marker;
    afterIsPrefix = delimiter !== "" && marker.startsWith(prefix) && marker.endsWith(delimiter) && marker.length > prefix.length;
  }

  const result = listKeys(ctx.store.sortedKeys(ctx.bucket), { prefix, delimiter, maxKeys, after, afterIsPrefix });
  const contents: XmlObject[] = [];
  const prefixes: XmlObject[] = [];
  for (const e of result.entries) {
    if (e.isPrefix) {
      prefixes.push({ Prefix: enc(e.value) });
      continue;
    }
    const m = ctx.store.getObject(ctx.bucket, e.value);
    if (!m) continue; // deleted since the key list was taken
    contents.push({
      Key: enc(m.key),
      LastModified: isoDate(m.lastModified),
      ETag: `"${m.etag}"`,
      Size: m.size,
      ...(v2 && ctx.query.get("fetch-owner") !== "true" ? {} : { Owner: OWNER }),
      StorageClass: "STANDARD",
    });
  }
  const last = result.entries[result.entries.length - 1];
  const body: XmlObject = { Name: ctx.bucket, Prefix: enc(prefix) };
  if (v2) {
    if (startAfter !== undefined) body.StartAfter = enc(startAfter);
    if (token !== undefined) body.ContinuationToken = token;
    if (result.truncated && last)
      body.NextContinuationToken = Buffer.from(JSON.stringify({ a: last.value, p: last.isPrefix } satisfies Token)).toString("base64url");
    body.KeyCount = result.entries.length;
  } else {
    body.Marker = enc(marker ?? "");
    if (result.truncated && last) body.NextMarker = enc(last.value);
  }
  body.MaxKeys = maxKeys;
  if (delimiter !== "") body.Delimiter = enc(delimiter);
  if (ctx.query.has("encoding-type")) body.EncodingType = "url";
  body.IsTruncated = result.truncated;
  body.Contents = contents;
  body.CommonPrefixes = prefixes;
  return xmlResponse(xmlDocument("ListBucketResult", body));
}

/** DeleteObjects (POST ?delete). Missing keys count as deleted, as in S3. */
export async function deleteObjects(ctx: Ctx): Promise<S3Response> {
  if (!ctx.store.bucket(ctx.bucket)) throw Errors.noSuchBucket(ctx.bucket);
  const root = parseXml(await readXml(ctx));
  if (root.name !== "Delete") throw Errors.malformedXML();
  const quiet = childText(root, "Quiet")?.trim() === "true";
  const objects = childrenNamed(root, "Object");
  if (objects.length === 0 || objects.length > 1000) throw Errors.malformedXML();
  const deleted: XmlObject[] = [];
  const errors: XmlObject[] = [];
  for (const o of objects) {
    const key = childText(o, "Key");
    if (key === undefined || key === "") throw Errors.malformedXML();
    try {
      await ctx.store.deleteObject(ctx.bucket, key);
      if (!quiet) deleted.push({ Key: key });
    } catch (e) {
      const err = e instanceof S3Error ? e : new S3Error("InternalError", "We encountered an internal error. Please try again.", 500);
      errors.push({ Key: key, Code: err.code, Message: err.message });
    }
  }
  return xmlResponse(xmlDocument("DeleteResult", { Deleted: deleted, Error: errors }));
}
