// The local S3 node driven through the AWS SDK v3 over real HTTP: bucket and
// object operations, listing, tagging, copy, multipart, concurrency and restart.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Readable } from "node:stream";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteBucketCorsCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  DeleteObjectTaggingCommand,
  GetBucketCorsCommand,
  GetBucketLocationCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { bytes, makeClient, md5Hex, signedFetch, startTestServer, streamToBuffer, type TestServer } from "./local-s3-helpers.ts";
import { startLocalS3 } from "../../storage/local-s3/index.ts";
import { createHash } from "node:crypto";

const MiB = 1024 * 1024;
let t: TestServer;
let s3: S3Client;

beforeAll(async () => {
  t = await startTestServer();
  s3 = t.client;
  await s3.send(new CreateBucketCommand({ Bucket: "media" }));
});
afterAll(async () => {
  await t.cleanup();
});

/** Capture the signed request headers the SDK sends (deserialize step sees the final request). */
function captureHeaders(client: S3Client): Record<string, string>[] {
  const seen: Record<string, string>[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      seen.push({ ...(args.request as { headers: Record<string, string> }).headers });
      return next(args);
    },
    { step: "deserialize", name: "captureHeaders" },
  );
  return seen;
}

async function expectS3Error(p: Promise<unknown>, name: string, status: number) {
  try {
    await p;
  } catch (e) {
    const err = e as { name: string; $metadata?: { httpStatusCode?: number } };
    expect({ name: err.name, status: err.$metadata?.httpStatusCode }).toEqual({ name, status });
    return e;
  }
  throw new Error(`expected ${name} (${status}) but the call succeeded`);
}

describe("buckets", () => {
  test("create, list, head, re-create, delete", async () => {
    await s3.send(new CreateBucketCommand({ Bucket: "scratch-bucket" }));
    const list = await s3.send(new ListBucketsCommand({}));
    expect(list.Buckets?.map((b) => b.Name)).toContain("scratch-bucket");
    expect(list.Buckets?.find((b) => b.Name === "scratch-bucket")?.CreationDate).toBeInstanceOf(Date);
    const head = await s3.send(new HeadBucketCommand({ Bucket: "scratch-bucket" }));
    expect(head.$metadata.httpStatusCode).toBe(200);
    expect(head.$metadata.requestId).toMatch(/^[0-9A-F]{16}$/);
    await expectS3Error(s3.send(new CreateBucketCommand({ Bucket: "scratch-bucket" })), "BucketAlreadyOwnedByYou", 409);

    await s3.send(new PutObjectCommand({ Bucket: "scratch-bucket", Key: "x", Body: "x" }));
    await expectS3Error(s3.send(new DeleteBucketCommand({ Bucket: "scratch-bucket" })), "BucketNotEmpty", 409);
    await s3.send(new DeleteObjectCommand({ Bucket: "scratch-bucket", Key: "x" }));
    const del = await s3.send(new DeleteBucketCommand({ Bucket: "scratch-bucket" }));
    expect(del.$metadata.httpStatusCode).toBe(204);
    await expectS3Error(s3.send(new HeadBucketCommand({ Bucket: "scratch-bucket" })), "NotFound", 404);
    await expectS3Error(s3.send(new ListObjectsV2Command({ Bucket: "scratch-bucket" })), "NoSuchBucket", 404);
  });

  test("bucket operations answer on /bucket as well as /bucket/; GetBucketLocation", async () => {
    for (const path of ["/media", "/media/"]) {
      const res = await signedFetch(t.s3.url, { method: "GET", path, query: { "list-type": "2", "max-keys": "1" } });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("<ListBucketResult");
      expect((await signedFetch(t.s3.url, { method: "HEAD", path })).status).toBe(200);
    }
    const loc = await s3.send(new GetBucketLocationCommand({ Bucket: "media" }));
    expect(loc.LocationConstraint ?? "").toBe("");
  });

  test("invalid bucket names are rejected", async () => {
    await expectS3Error(s3.send(new CreateBucketCommand({ Bucket: "Bad_Name" })), "InvalidBucketName", 400);
    await expectS3Error(s3.send(new CreateBucketCommand({ Bucket: "a..b" })), "InvalidBucketName", 400);
  });

  test("bucket CORS configuration round-trips", async () => {
    await s3.send(new CreateBucketCommand({ Bucket: "cors-config" }));
    await expectS3Error(s3.send(new GetBucketCorsCommand({ Bucket: "cors-config" })), "NoSuchCORSConfiguration", 404);
    const rules = [
      { ID: "web", AllowedOrigins: ["https://*.example.com"], AllowedMethods: ["GET", "PUT"], AllowedHeaders: ["*"], ExposeHeaders: ["ETag"], MaxAgeSeconds: 600 },
      { AllowedOrigins: ["*"], AllowedMethods: ["GET"] },
    ];
    await s3.send(new PutBucketCorsCommand({ Bucket: "cors-config", CORSConfiguration: { CORSRules: rules } }));
    const got = await s3.send(new GetBucketCorsCommand({ Bucket: "cors-config" }));
    expect(got.CORSRules).toEqual(rules);
    await expectS3Error(
      s3.send(new PutBucketCorsCommand({ Bucket: "cors-config", CORSConfiguration: { CORSRules: [{ AllowedOrigins: ["*"], AllowedMethods: ["PATCH"] }] } })),
      "InvalidRequest",
      400,
    );
    await s3.send(new DeleteBucketCorsCommand({ Bucket: "cors-config" }));
    await expectS3Error(s3.send(new GetBucketCorsCommand({ Bucket: "cors-config" })), "NoSuchCORSConfiguration", 404);
  });
});

describe("objects", () => {
  test("PutObject (Buffer) stores content type, metadata, headers and tags; Get/Head return them", async () => {
    const body = Buffer.from("hello, local s3");
    const put = await s3.send(
      new PutObjectCommand({
        Bucket: "media",
        Key: "docs/hello.txt",
        Body: body,
        ContentType: "text/plain; charset=utf-8",
        CacheControl: "max-age=60",
        ContentDisposition: 'attachment; filename="hello.txt"',
        Metadata: { owner: "alice", purpose: "test" },
        Tagging: "project=alpha&stage=raw%20upload",
      }),
    );
    expect(put.ETag).toBe(`"${md5Hex(body)}"`);
    const get = await s3.send(new GetObjectCommand({ Bucket: "media", Key: "docs/hello.txt" }));
    expect(await get.Body!.transformToString()).toBe("hello, local s3");
    expect(get.ContentType).toBe("text/plain; charset=utf-8");
    expect(get.CacheControl).toBe("max-age=60");
    expect(get.ContentDisposition).toBe('attachment; filename="hello.txt"');
    expect(get.Metadata).toEqual({ owner: "alice", purpose: "test" });
    expect(get.ContentLength).toBe(body.length);
    expect(get.ETag).toBe(put.ETag);
    expect(get.AcceptRanges).toBe("bytes");
    expect(get.TagCount).toBe(2);
    expect(get.LastModified).toBeInstanceOf(Date);
    const head = await s3.send(new HeadObjectCommand({ Bucket: "media", Key: "docs/hello.txt" }));
    expect(head.ContentLength).toBe(body.length);
    expect(head.ContentType).toBe("text/plain; charset=utf-8");
    expect(head.Metadata).toEqual({ owner: "alice", purpose: "test" });
    expect(head.ETag).toBe(put.ETag);
    const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: "media", Key: "docs/hello.txt" }));
    expect(tags.TagSet).toEqual([
      { Key: "project", Value: "alpha" },
      { Key: "stage", Value: "raw upload" },
    ]);
  });

  test("PutObject with a stream body goes through aws-chunked with a trailing checksum", async () => {
    const client = makeClient(t.s3.url);
    const seen = captureHeaders(client);
    const data = bytes(300 * 1024, 7);
    const chunks = [data.subarray(0, 100_000), data.subarray(100_000, 250_000), data.subarray(250_000)];
    const put = await client.send(
      new PutObjectCommand({ Bucket: "media", Key: "streamed.bin", Body: Readable.from(chunks), ContentLength: data.length, ContentType: "application/x-test" }),
    );
    expect(seen[0]?.["x-amz-content-sha256"]).toBe("STREAMING-UNSIGNED-PAYLOAD-TRAILER");
    expect(seen[0]?.["x-amz-trailer"]).toBe("x-amz-checksum-crc32");
    expect(put.ETag).toBe(`"${md5Hex(data)}"`);
    const get = await client.send(new GetObjectCommand({ Bucket: "media", Key: "streamed.bin" }));
    expect((await streamToBuffer(get.Body)).equals(data)).toBe(true);
    expect(get.ContentType).toBe("application/x-test");
    expect(get.ContentEncoding).toBeUndefined();
    client.destroy();
  });

  test("missing objects: NoSuchKey for GET, bare 404 for HEAD, 204 for DELETE", async () => {
    await expectS3Error(s3.send(new GetObjectCommand({ Bucket: "media", Key: "nope" })), "NoSuchKey", 404);
    await expectS3Error(s3.send(new HeadObjectCommand({ Bucket: "media", Key: "nope" })), "NotFound", 404);
    const del = await s3.send(new DeleteObjectCommand({ Bucket: "media", Key: "nope" }));
    expect(del.$metadata.httpStatusCode).toBe(204);
    await expectS3Error(s3.send(new GetObjectCommand({ Bucket: "no-such-bucket", Key: "x" })), "NoSuchBucket", 404);
  });

  test("DeleteObject removes the object", async () => {
    await s3.send(new PutObjectCommand({ Bucket: "media", Key: "to-delete", Body: "bye" }));
    await s3.send(new DeleteObjectCommand({ Bucket: "media", Key: "to-delete" }));
    await expectS3Error(s3.send(new HeadObjectCommand({ Bucket: "media", Key: "to-delete" })), "NotFound", 404);
  });

  test("DeleteObjects, verbose and quiet", async () => {
    for (const k of ["batch/1", "batch/2", "batch/3"]) await s3.send(new PutObjectCommand({ Bucket: "media", Key: k, Body: k }));
    const verbose = await s3.send(
      new DeleteObjectsCommand({ Bucket: "media", Delete: { Objects: [{ Key: "batch/1" }, { Key: "batch/missing" }] } }),
    );
    expect(verbose.Deleted?.map((d) => d.Key).sort()).toEqual(["batch/1", "batch/missing"]);
    expect(verbose.Errors ?? []).toEqual([]);
    const quiet = await s3.send(new DeleteObjectsCommand({ Bucket: "media", Delete: { Quiet: true, Objects: [{ Key: "batch/2" }, { Key: "batch/3" }] } }));
    expect(quiet.Deleted ?? []).toEqual([]);
    const left = await s3.send(new ListObjectsV2Command({ Bucket: "media", Prefix: "batch/" }));
    expect(left.KeyCount).toBe(0);
  });

  test("CopyObject with COPY and REPLACE metadata directives", async () => {
    await s3.send(
      new PutObjectCommand({ Bucket: "media", Key: "orig.jpg", Body: "jpegbytes", ContentType: "image/jpeg", Metadata: { w: "100" }, Tagging: "kind=original" }),
    );
    const copied = await s3.send(new CopyObjectCommand({ Bucket: "media", Key: "copies/a.jpg", CopySource: "media/orig.jpg" }));
    expect(copied.CopyObjectResult?.ETag).toBe(`"${md5Hex("jpegbytes")}"`);
    const a = await s3.send(new GetObjectCommand({ Bucket: "media", Key: "copies/a.jpg" }));
    expect(await a.Body!.transformToString()).toBe("jpegbytes");
    expect(a.ContentType).toBe("image/jpeg");
    expect(a.Metadata).toEqual({ w: "100" });
    expect(a.TagCount).toBe(1);

    await s3.send(
      new CopyObjectCommand({
        Bucket: "media",
        Key: "copies/b.webp",
        CopySource: "/media/orig.jpg",
        MetadataDirective: "REPLACE",
        ContentType: "image/webp",
        Metadata: { w: "50" },
        TaggingDirective: "REPLACE",
        Tagging: "kind=derivative",
      }),
    );
    const b = await s3.send(new HeadObjectCommand({ Bucket: "media", Key: "copies/b.webp" }));
    expect(b.ContentType).toBe("image/webp");
    expect(b.Metadata).toEqual({ w: "50" });
    const bt = await s3.send(new GetObjectTaggingCommand({ Bucket: "media", Key: "copies/b.webp" }));
    expect(bt.TagSet).toEqual([{ Key: "kind", Value: "derivative" }]);

    await expectS3Error(s3.send(new CopyObjectCommand({ Bucket: "media", Key: "orig.jpg", CopySource: "media/orig.jpg" })), "InvalidRequest", 400);
    await expectS3Error(s3.send(new CopyObjectCommand({ Bucket: "media", Key: "x", CopySource: "media/missing" })), "NoSuchKey", 404);
  });

  test("object tagging: put, get, delete and limits", async () => {
    await s3.send(new PutObjectCommand({ Bucket: "media", Key: "tagged", Body: "t" }));
    await s3.send(
      new PutObjectTaggingCommand({ Bucket: "media", Key: "tagged", Tagging: { TagSet: [{ Key: "a", Value: "1" }, { Key: "b c", Value: "x/y:z" }] } }),
    );
    const got = await s3.send(new GetObjectTaggingCommand({ Bucket: "media", Key: "tagged" }));
    expect(got.TagSet).toEqual([
      { Key: "a", Value: "1" },
      { Key: "b c", Value: "x/y:z" },
    ]);
    await s3.send(new DeleteObjectTaggingCommand({ Bucket: "media", Key: "tagged" }));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: "media", Key: "tagged" }))).TagSet).toEqual([]);

    const eleven = Array.from({ length: 11 }, (_, i) => ({ Key: `k${i}`, Value: "v" }));
    await expectS3Error(s3.send(new PutObjectTaggingCommand({ Bucket: "media", Key: "tagged", Tagging: { TagSet: eleven } })), "InvalidTag", 400);
    await expectS3Error(
      s3.send(new PutObjectTaggingCommand({ Bucket: "media", Key: "tagged", Tagging: { TagSet: [{ Key: "k".repeat(129), Value: "v" }] } })),
      "InvalidTag",
      400,
    );
    await expectS3Error(
      s3.send(new PutObjectCommand({ Bucket: "media", Key: "tagged2", Body: "x", Tagging: eleven.map((x) => `${x.Key}=${x.Value}`).join("&") })),
      "InvalidTag",
      400,
    );
    await expectS3Error(s3.send(new PutObjectCommand({ Bucket: "media", Key: "tagged2", Body: "x", Tagging: `k=${"v".repeat(257)}` })), "InvalidTag", 400);
    await expectS3Error(s3.send(new PutObjectCommand({ Bucket: "media", Key: "tagged2", Body: "x", Tagging: "a=1&a=2" })), "InvalidTag", 400);
    await expectS3Error(s3.send(new HeadObjectCommand({ Bucket: "media", Key: "tagged2" })), "NotFound", 404);
    await expectS3Error(s3.send(new GetObjectTaggingCommand({ Bucket: "media", Key: "nope" })), "NoSuchKey", 404);
  });

  test("keys with unicode, spaces and reserved characters round-trip", async () => {
    const keys = [
      "unicode/日本語 ファイル.png",
      "unicode/émoji 😀.txt",
      "unicode/plus+and%percent",
      "unicode/a&b=c?d#e",
      "unicode/(parens) [brackets] {braces} 'quotes' \"dq\" !*~",
      "unicode/trailing space ",
      "unicode/back\\slash",
      "unicode//double//slash",
      "unicode/%2e%2e/literal-percent-dots",
    ];
    for (const k of keys) await s3.send(new PutObjectCommand({ Bucket: "media", Key: k, Body: `body of ${k}` }));
    for (const k of keys) {
      const g = await s3.send(new GetObjectCommand({ Bucket: "media", Key: k }));
      expect(await g.Body!.transformToString()).toBe(`body of ${k}`);
    }
    const list = await s3.send(new ListObjectsV2Command({ Bucket: "media", Prefix: "unicode/" }));
    expect(list.Contents?.map((c) => c.Key).sort()).toEqual([...keys].sort());
    // url encoding-type (what the aws CLI asks for) decodes back to the same keys
    const encoded = await s3.send(new ListObjectsV2Command({ Bucket: "media", Prefix: "unicode/", EncodingType: "url" }));
    expect(encoded.Contents?.map((c) => decodeURIComponent(c.Key!)).sort()).toEqual([...keys].sort());
  });
});

describe("listing", () => {
  const keys = Array.from({ length: 25 }, (_, i) => `list/item-${String(i).padStart(2, "0")}`);
  beforeAll(async () => {
    await Promise.all(keys.map((k) => s3.send(new PutObjectCommand({ Bucket: "media", Key: k, Body: k }))));
    for (const k of ["tree/a/1", "tree/a/2", "tree/b/1", "tree/c", "tree/d/x/y"]) await s3.send(new PutObjectCommand({ Bucket: "media", Key: k, Body: k }));
  });

  test("ListObjectsV2 paginates with max-keys and continuation tokens", async () => {
    const pages: string[][] = [];
    let token: string | undefined;
    do {
      const r = await s3.send(new ListObjectsV2Command({ Bucket: "media", Prefix: "list/", MaxKeys: 10, ContinuationToken: token }));
      pages.push(r.Contents!.map((c) => c.Key!));
      expect(r.KeyCount).toBe(r.Contents!.length);
      expect(r.MaxKeys).toBe(10);
      expect(r.IsTruncated).toBe(pages.length < 3);
      token = r.NextContinuationToken;
      if (r.IsTruncated) expect(token).toBeTruthy();
    } while (token);
    expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
    expect(pages.flat()).toEqual(keys);
    const first = await s3.send(new ListObjectsV2Command({ Bucket: "media", Prefix: "list/", MaxKeys: 1 }));
    expect(first.Contents![0]).toMatchObject({ Key: "list/item-00", Size: 12, ETag: `"${md5Hex("list/item-00")}"`, StorageClass: "STANDARD" });
  });

  test("start-after and the default page size", async () => {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: "media", Prefix: "list/", StartAfter: "list/item-20" }));
    expect(r.Contents!.map((c) => c.Key)).toEqual(keys.slice(21));
    expect(r.MaxKeys).toBe(1000);
    expect(r.IsTruncated).toBe(false);
  });

  test("delimiter groups CommonPrefixes, also across pages", async () => {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: "media", Prefix: "tree/", Delimiter: "/" }));
    expect(r.Contents!.map((c) => c.Key)).toEqual(["tree/c"]);
    expect(r.CommonPrefixes!.map((p) => p.Prefix)).toEqual(["tree/a/", "tree/b/", "tree/d/"]);
    expect(r.KeyCount).toBe(4);
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const p = await s3.send(new ListObjectsV2Command({ Bucket: "media", Prefix: "tree/", Delimiter: "/", MaxKeys: 1, ContinuationToken: token }));
      seen.push(...(p.Contents ?? []).map((c) => c.Key!), ...(p.CommonPrefixes ?? []).map((c) => c.Prefix!));
      token = p.NextContinuationToken;
    } while (token);
    expect(seen).toEqual(["tree/a/", "tree/b/", "tree/c", "tree/d/"]);
  });

  test("ListObjects (v1) with marker", async () => {
    const r = await s3.send(new ListObjectsCommand({ Bucket: "media", Prefix: "list/", MaxKeys: 10, Marker: "list/item-04" }));
    expect(r.Contents!.map((c) => c.Key)).toEqual(keys.slice(5, 15));
    expect(r.IsTruncated).toBe(true);
  });
});

describe("multipart", () => {
  const part1 = bytes(5 * MiB, 11);
  const part2 = bytes(5 * MiB, 12);
  const part3 = bytes(1234, 13);

  async function upload(key: string, extra: Record<string, unknown> = {}) {
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: "media", Key: key, ...extra }));
    const id = created.UploadId!;
    const etags = await Promise.all(
      [part1, part2, part3].map(async (body, i) => (await s3.send(new UploadPartCommand({ Bucket: "media", Key: key, UploadId: id, PartNumber: i + 1, Body: body }))).ETag!),
    );
    return { id, etags };
  }

  test("create, parallel upload parts, list parts, complete", async () => {
    const { id, etags } = await upload("videos/big.mp4", {
      ContentType: "video/mp4",
      Metadata: { source: "camera" },
      Tagging: "state=uploaded",
      CacheControl: "no-cache",
    });
    expect(etags).toEqual([part1, part2, part3].map((p) => `"${md5Hex(p)}"`));

    const ups = await s3.send(new ListMultipartUploadsCommand({ Bucket: "media", Prefix: "videos/" }));
    expect(ups.Uploads?.map((u) => [u.Key, u.UploadId])).toEqual([["videos/big.mp4", id]]);
    const none = await s3.send(new ListMultipartUploadsCommand({ Bucket: "media", Prefix: "other/" }));
    expect(none.Uploads ?? []).toEqual([]);

    const page1 = await s3.send(new ListPartsCommand({ Bucket: "media", Key: "videos/big.mp4", UploadId: id, MaxParts: 2 }));
    expect(page1.Parts!.map((p) => [p.PartNumber, p.ETag, p.Size])).toEqual([
      [1, etags[0], 5 * MiB],
      [2, etags[1], 5 * MiB],
    ]);
    expect(page1.IsTruncated).toBe(true);
    expect(page1.NextPartNumberMarker).toBe("2");
    expect(page1.Parts![0]!.LastModified).toBeInstanceOf(Date);
    const page2 = await s3.send(new ListPartsCommand({ Bucket: "media", Key: "videos/big.mp4", UploadId: id, PartNumberMarker: page1.NextPartNumberMarker }));
    expect(page2.Parts!.map((p) => [p.PartNumber, p.Size])).toEqual([[3, 1234]]);
    expect(page2.IsTruncated).toBe(false);

    const done = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: "media",
        Key: "videos/big.mp4",
        UploadId: id,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
      }),
    );
    const binaryMd5s = Buffer.concat([part1, part2, part3].map((p) => createHash("md5").update(p).digest()));
    const expectedEtag = `"${md5Hex(binaryMd5s)}-3"`;
    expect(done.ETag).toBe(expectedEtag);
    expect(done.Key).toBe("videos/big.mp4");

    const get = await s3.send(new GetObjectCommand({ Bucket: "media", Key: "videos/big.mp4" }));
    expect(get.ETag).toBe(expectedEtag);
    expect(get.ContentType).toBe("video/mp4");
    expect(get.CacheControl).toBe("no-cache");
    expect(get.Metadata).toEqual({ source: "camera" });
    expect(get.ContentLength).toBe(10 * MiB + 1234);
    expect((await streamToBuffer(get.Body)).equals(Buffer.concat([part1, part2, part3]))).toBe(true);
    const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: "media", Key: "videos/big.mp4" }));
    expect(tags.TagSet).toEqual([{ Key: "state", Value: "uploaded" }]);

    await expectS3Error(s3.send(new ListPartsCommand({ Bucket: "media", Key: "videos/big.mp4", UploadId: id })), "NoSuchUpload", 404);
  });

  test("Complete rejects a wrong ETag, a wrong order and a small non-last part", async () => {
    const { id, etags } = await upload("videos/bad.mp4");
    const complete = (parts: { ETag: string; PartNumber: number }[]) =>
      s3.send(new CompleteMultipartUploadCommand({ Bucket: "media", Key: "videos/bad.mp4", UploadId: id, MultipartUpload: { Parts: parts } }));
    await expectS3Error(complete([{ ETag: etags[0]!, PartNumber: 1 }, { ETag: '"0123456789abcdef0123456789abcdef"', PartNumber: 2 }]), "InvalidPart", 400);
    await expectS3Error(complete([{ ETag: etags[0]!, PartNumber: 1 }, { ETag: etags[0]!, PartNumber: 7 }]), "InvalidPart", 400);
    await expectS3Error(complete([{ ETag: etags[1]!, PartNumber: 2 }, { ETag: etags[0]!, PartNumber: 1 }]), "InvalidPartOrder", 400);
    await expectS3Error(complete([{ ETag: etags[2]!, PartNumber: 3 }, { ETag: etags[2]!, PartNumber: 3 }]), "InvalidPartOrder", 400);
    // part 3 is 1234 bytes: fine last, too small in the middle
    const small = await s3.send(new UploadPartCommand({ Bucket: "media", Key: "videos/bad.mp4", UploadId: id, PartNumber: 4, Body: part1 }));
    await expectS3Error(complete([{ ETag: etags[2]!, PartNumber: 3 }, { ETag: small.ETag!, PartNumber: 4 }]), "EntityTooSmall", 400);
    // the upload survives failed completes; a subset of parts is fine
    const ok = await complete([{ ETag: etags[0]!, PartNumber: 1 }, { ETag: etags[2]!, PartNumber: 3 }]);
    expect(ok.ETag).toMatch(/-2"$/);
    const head = await s3.send(new HeadObjectCommand({ Bucket: "media", Key: "videos/bad.mp4" }));
    expect(head.ContentLength).toBe(5 * MiB + 1234);
  });

  test("UploadPart validates part number and upload id", async () => {
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: "media", Key: "videos/pn.mp4" }));
    await expectS3Error(
      s3.send(new UploadPartCommand({ Bucket: "media", Key: "videos/pn.mp4", UploadId: created.UploadId, PartNumber: 10001, Body: "x" })),
      "InvalidArgument",
      400,
    );
    await expectS3Error(
      s3.send(new UploadPartCommand({ Bucket: "media", Key: "videos/pn.mp4", UploadId: "not-an-upload", PartNumber: 1, Body: "x" })),
      "NoSuchUpload",
      404,
    );
    // an upload id is bound to its key
    await expectS3Error(
      s3.send(new UploadPartCommand({ Bucket: "media", Key: "videos/other.mp4", UploadId: created.UploadId, PartNumber: 1, Body: "x" })),
      "NoSuchUpload",
      404,
    );
    await s3.send(new AbortMultipartUploadCommand({ Bucket: "media", Key: "videos/pn.mp4", UploadId: created.UploadId }));
  });

  test("AbortMultipartUpload removes the upload; unknown uploads are NoSuchUpload", async () => {
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: "media", Key: "videos/aborted.mp4" }));
    await s3.send(new UploadPartCommand({ Bucket: "media", Key: "videos/aborted.mp4", UploadId: created.UploadId, PartNumber: 1, Body: "abc" }));
    const abort = await s3.send(new AbortMultipartUploadCommand({ Bucket: "media", Key: "videos/aborted.mp4", UploadId: created.UploadId }));
    expect(abort.$metadata.httpStatusCode).toBe(204);
    await expectS3Error(s3.send(new ListPartsCommand({ Bucket: "media", Key: "videos/aborted.mp4", UploadId: created.UploadId })), "NoSuchUpload", 404);
    await expectS3Error(
      s3.send(new AbortMultipartUploadCommand({ Bucket: "media", Key: "videos/aborted.mp4", UploadId: created.UploadId })),
      "NoSuchUpload",
      404,
    );
    const ups = await s3.send(new ListMultipartUploadsCommand({ Bucket: "media", Prefix: "videos/aborted" }));
    expect(ups.Uploads ?? []).toEqual([]);
  });
});

describe("concurrency", () => {
  test("many parallel uploads of different keys", async () => {
    const items = Array.from({ length: 40 }, (_, i) => ({ key: `parallel/${i}`, body: bytes(20_000 + i * 997, 100 + i) }));
    await Promise.all(items.map((it) => s3.send(new PutObjectCommand({ Bucket: "media", Key: it.key, Body: it.body }))));
    const results = await Promise.all(items.map(async (it) => (await streamToBuffer((await s3.send(new GetObjectCommand({ Bucket: "media", Key: it.key }))).Body)).equals(it.body)));
    expect(results.every(Boolean)).toBe(true);
  });

  test("parallel writes to one key leave exactly one complete version", async () => {
    const versions = Array.from({ length: 12 }, (_, i) => bytes(64 * 1024, 500 + i));
    await Promise.all(versions.map((v) => s3.send(new PutObjectCommand({ Bucket: "media", Key: "contended", Body: v }))));
    const got = await streamToBuffer((await s3.send(new GetObjectCommand({ Bucket: "media", Key: "contended" }))).Body);
    expect(versions.some((v) => v.equals(got))).toBe(true);
  });

  test("a reader sees the old version while the key is overwritten mid-read", async () => {
    const oldBody = Buffer.alloc(16 * MiB, "A");
    const newBody = Buffer.alloc(16 * MiB, "B");
    await s3.send(new PutObjectCommand({ Bucket: "media", Key: "overwrite.bin", Body: oldBody }));
    const get = await s3.send(new GetObjectCommand({ Bucket: "media", Key: "overwrite.bin" }));
    const reader = (get.Body as unknown as Readable)[Symbol.asyncIterator]();
    const firstChunk = (await reader.next()).value as Buffer;
    await s3.send(new PutObjectCommand({ Bucket: "media", Key: "overwrite.bin", Body: newBody }));
    const rest: Buffer[] = [firstChunk];
    for (let r = await reader.next(); !r.done; r = await reader.next()) rest.push(r.value as Buffer);
    expect(Buffer.concat(rest).equals(oldBody)).toBe(true);
    const after = await streamToBuffer((await s3.send(new GetObjectCommand({ Bucket: "media", Key: "overwrite.bin" }))).Body);
    expect(after.equals(newBody)).toBe(true);
  });
});

describe("durability", () => {
  test("objects, metadata, tags, CORS and in-progress uploads survive stop + start", async () => {
    const server = await startTestServer();
    let client = server.client;
    await client.send(new CreateBucketCommand({ Bucket: "persist" }));
    await client.send(
      new PutObjectCommand({ Bucket: "persist", Key: "dir/ключ.txt", Body: "persisted", ContentType: "text/x-test", Metadata: { a: "b" }, Tagging: "t=1" }),
    );
    await client.send(new PutBucketCorsCommand({ Bucket: "persist", CORSConfiguration: { CORSRules: [{ AllowedOrigins: ["*"], AllowedMethods: ["GET"] }] } }));
    const mpu = await client.send(new CreateMultipartUploadCommand({ Bucket: "persist", Key: "pending.bin", ContentType: "application/x-pending" }));
    const part = await client.send(new UploadPartCommand({ Bucket: "persist", Key: "pending.bin", UploadId: mpu.UploadId, PartNumber: 1, Body: "part-one" }));
    client.destroy();
    await server.s3.stop();

    const again = await startLocalS3({ dir: server.dataDir, port: 0, credentials: [{ accessKeyId: "AKIALOCALS3TEST", secretAccessKey: "local/s3+secret=key" }] });
    client = makeClient(again.url);
    try {
      const got = await client.send(new GetObjectCommand({ Bucket: "persist", Key: "dir/ключ.txt" }));
      expect(await got.Body!.transformToString()).toBe("persisted");
      expect(got.ContentType).toBe("text/x-test");
      expect(got.Metadata).toEqual({ a: "b" });
      expect(got.TagCount).toBe(1);
      expect((await client.send(new ListObjectsV2Command({ Bucket: "persist" }))).Contents?.map((c) => c.Key)).toEqual(["dir/ключ.txt"]);
      expect((await client.send(new GetBucketCorsCommand({ Bucket: "persist" }))).CORSRules).toHaveLength(1);
      const parts = await client.send(new ListPartsCommand({ Bucket: "persist", Key: "pending.bin", UploadId: mpu.UploadId }));
      expect(parts.Parts?.map((p) => p.ETag)).toEqual([part.ETag]);
      await client.send(
        new CompleteMultipartUploadCommand({ Bucket: "persist", Key: "pending.bin", UploadId: mpu.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }),
      );
      const done = await client.send(new GetObjectCommand({ Bucket: "persist", Key: "pending.bin" }));
      expect(await done.Body!.transformToString()).toBe("part-one");
      expect(done.ContentType).toBe("application/x-pending");
    } finally {
      client.destroy();
      await again.stop();
      await server.cleanup();
    }
  });
});
