// Authentication: presigned URLs (PUT with signed Content-Type and x-amz-tagging,
// GET, UploadPart), tampering, expiry, anonymous requests, bad keys and regions,
// clock skew, and every payload mode (hex SHA-256, signed aws-chunked with and
// without trailer, unsigned trailer, checksums, Content-MD5).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { crc32 } from "node:zlib";
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  PutObjectCommand,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { bytes, CREDS, makeClient, md5Base64, s3Error, sha256Hex, signedFetch, signer, startTestServer, type TestServer } from "./local-s3-helpers.ts";

let t: TestServer;
const BUCKET = "auth-tests";

beforeAll(async () => {
  t = await startTestServer();
  await t.client.send(new CreateBucketCommand({ Bucket: BUCKET }));
});
afterAll(async () => {
  await t.cleanup();
});

async function exists(key: string): Promise<boolean> {
  try {
    await t.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    return true;
  } catch {
    return false;
  }
}

describe("presigned URLs", () => {
  const TAGGING = "source=browser&owner=user%2042";

  async function presignedPut(key: string, expiresIn = 300) {
    const client = makeClient(t.s3.url, { requestChecksumCalculation: "WHEN_REQUIRED" });
    const url = await getSignedUrl(client, new PutObjectCommand({ Bucket: BUCKET, Key: key, ContentType: "image/png", Tagging: TAGGING }), {
      expiresIn,
      signableHeaders: new Set(["content-type"]),
      unhoistableHeaders: new Set(["x-amz-tagging"]),
    });
    client.destroy();
    return url;
  }

  test("PUT with signed Content-Type and x-amz-tagging headers; tags are stored", async () => {
    const url = await presignedPut("uploads/photo one.png");
    expect(url).toContain("X-Amz-SignedHeaders=content-type%3Bhost%3Bx-amz-tagging");
    const res = await fetch(url, { method: "PUT", headers: { "content-type": "image/png", "x-amz-tagging": TAGGING }, body: "PNGDATA" });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBeTruthy();
    expect(res.headers.get("x-amz-request-id")).toMatch(/^[0-9A-F]{16}$/);
    const tags = await t.client.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: "uploads/photo one.png" }));
    expect(tags.TagSet).toEqual([
      { Key: "source", Value: "browser" },
      { Key: "owner", Value: "user 42" },
    ]);
    const head = await t.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: "uploads/photo one.png" }));
    expect(head.ContentType).toBe("image/png");
    expect(head.ContentLength).toBe(7);
  });

  test("the same URL fails when a signed header differs or is missing", async () => {
    const url = await presignedPut("uploads/strict.png");
    const attempts: Record<string, string>[] = [
      { "content-type": "image/jpeg", "x-amz-tagging": TAGGING },
      { "content-type": "image/png", "x-amz-tagging": "source=attacker" },
      { "content-type": "image/png" },
      { "x-amz-tagging": TAGGING },
    ];
    for (const headers of attempts) {
      const err = await s3Error(await fetch(url, { method: "PUT", headers, body: "x" }));
      expect({ status: err.status, code: err.code }).toEqual({ status: 403, code: "SignatureDoesNotMatch" });
    }
    // x-amz-* headers that were not signed are refused, so metadata cannot be smuggled in
    const extra = await s3Error(
      await fetch(url, { method: "PUT", headers: { "content-type": "image/png", "x-amz-tagging": TAGGING, "x-amz-meta-evil": "1" }, body: "x" }),
    );
    expect({ status: extra.status, code: extra.code }).toEqual({ status: 403, code: "AccessDenied" });
    expect(await exists("uploads/strict.png")).toBe(false);
  });

  test("a tampered signature or key is rejected", async () => {
    const url = await presignedPut("uploads/tamper.png");
    const headers = { "content-type": "image/png", "x-amz-tagging": TAGGING };
    const sig = /X-Amz-Signature=([0-9a-f]+)/.exec(url)![1]!;
    const flipped = sig.slice(0, 10) + (sig[10] === "a" ? "b" : "a") + sig.slice(11);
    const badSig = await s3Error(await fetch(url.replace(sig, flipped), { method: "PUT", headers, body: "x" }));
    expect({ status: badSig.status, code: badSig.code }).toEqual({ status: 403, code: "SignatureDoesNotMatch" });
    const badKey = await s3Error(await fetch(url.replace("tamper.png", "tamper.pnG"), { method: "PUT", headers, body: "x" }));
    expect({ status: badKey.status, code: badKey.code }).toEqual({ status: 403, code: "SignatureDoesNotMatch" });
    const badBucket = await s3Error(await fetch(url.replace(`/${BUCKET}/`, "/auth-testz/"), { method: "PUT", headers, body: "x" }));
    expect(badBucket.status).toBe(403);
    expect(await exists("uploads/tamper.png")).toBe(false);
    expect(await exists("uploads/tamper.pnG")).toBe(false);
  });

  test("an expired URL is rejected with 'Request has expired'", async () => {
    const url = await presignedPut("uploads/late.png", 1);
    await Bun.sleep(2100);
    const err = await s3Error(await fetch(url, { method: "PUT", headers: { "content-type": "image/png", "x-amz-tagging": TAGGING }, body: "x" }));
    expect({ status: err.status, code: err.code, message: err.message }).toEqual({ status: 403, code: "AccessDenied", message: "Request has expired" });
  });

  test("X-Amz-Expires above one week is refused", async () => {
    const url = (await presignedPut("uploads/week.png")).replace(/X-Amz-Expires=\d+/, "X-Amz-Expires=604801");
    const err = await s3Error(await fetch(url, { method: "PUT", headers: { "content-type": "image/png", "x-amz-tagging": TAGGING }, body: "x" }));
    expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: "AuthorizationQueryParametersError" });
  });

  test("presigned GET, with a response header override", async () => {
    await t.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "dl/report.bin", Body: "report-bytes", ContentType: "application/octet-stream" }));
    const url = await getSignedUrl(
      t.client,
      new GetObjectCommand({ Bucket: BUCKET, Key: "dl/report.bin", ResponseContentDisposition: 'attachment; filename="r.bin"', ResponseContentType: "text/plain" }),
      { expiresIn: 60 },
    );
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("report-bytes");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="r.bin"');
    expect(res.headers.get("content-type")).toBe("text/plain");
    expect(res.headers.get("content-length")).toBe("12");
    // the override parameters are signed too
    const changed = await fetch(url.replace("text%2Fplain", "text%2Fhtml"));
    expect(changed.status).toBe(403);
  });

  test("presigned UploadPart via fetch, completed through the SDK", async () => {
    const key = "dl/presigned-multipart.bin";
    const created = await t.client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
    const presignClient = makeClient(t.s3.url, { requestChecksumCalculation: "WHEN_REQUIRED" });
    const parts = [bytes(5 * 1024 * 1024, 3), bytes(1000, 4)];
    const etags: string[] = [];
    for (let i = 0; i < parts.length; i++) {
      const url = await getSignedUrl(presignClient, new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId: created.UploadId, PartNumber: i + 1 }), {
        expiresIn: 60,
      });
      const res = await fetch(url, { method: "PUT", body: parts[i] as BodyInit });
      expect(res.status).toBe(200);
      etags.push(res.headers.get("etag")!);
    }
    presignClient.destroy();
    await t.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: key,
        UploadId: created.UploadId,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
      }),
    );
    const got = Buffer.from(await (await t.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToByteArray());
    expect(got.equals(Buffer.concat(parts))).toBe(true);
  });
});

describe("header authentication", () => {
  test("unsigned requests are AccessDenied", async () => {
    await t.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "private.txt", Body: "secret" }));
    for (const init of [{ method: "GET" }, { method: "PUT", body: "overwrite" }, { method: "DELETE" }]) {
      const err = await s3Error(await fetch(`${t.s3.url}/${BUCKET}/private.txt`, init));
      expect({ status: err.status, code: err.code }).toEqual({ status: 403, code: "AccessDenied" });
    }
    const list = await s3Error(await fetch(`${t.s3.url}/`));
    expect(list.status).toBe(403);
    const body = await (await t.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: "private.txt" }))).Body!.transformToString();
    expect(body).toBe("secret");
  });

  test("unknown access key, wrong secret, wrong region", async () => {
    const unknown = makeClient(t.s3.url, { credentials: { accessKeyId: "AKIAUNKNOWN", secretAccessKey: CREDS.secretAccessKey } });
    const wrongSecret = makeClient(t.s3.url, { credentials: { accessKeyId: CREDS.accessKeyId, secretAccessKey: "nope" } });
    const wrongRegion = makeClient(t.s3.url, { region: "eu-west-1" });
    const nameOf = async (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        (e: { name: string; $metadata?: { httpStatusCode?: number } }) => `${e.name} ${e.$metadata?.httpStatusCode}`,
      );
    expect(await nameOf(unknown.send(new ListBucketsCommand({})))).toBe("InvalidAccessKeyId 403");
    expect(await nameOf(wrongSecret.send(new ListBucketsCommand({})))).toBe("SignatureDoesNotMatch 403");
    expect(await nameOf(wrongRegion.send(new GetObjectCommand({ Bucket: BUCKET, Key: "private.txt" })))).toBe("AuthorizationHeaderMalformed 400");
    for (const c of [unknown, wrongSecret, wrongRegion]) c.destroy();
  });

  test("clock skew beyond 15 minutes is RequestTimeTooSkewed", async () => {
    const skewed = await s3Error(await signedFetch(t.s3.url, { method: "GET", path: `/${BUCKET}/private.txt`, signingDate: new Date(Date.now() - 16 * 60_000) }));
    expect({ status: skewed.status, code: skewed.code }).toEqual({ status: 403, code: "RequestTimeTooSkewed" });
    const ok = await signedFetch(t.s3.url, { method: "GET", path: `/${BUCKET}/private.txt`, signingDate: new Date(Date.now() - 10 * 60_000) });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("secret");
  });

  test("error documents carry Code, Message, Resource and RequestId", async () => {
    const res = await signedFetch(t.s3.url, { method: "GET", path: `/${BUCKET}/no/such%20key` });
    const err = await s3Error(res);
    expect(err.status).toBe(404);
    expect(err.body).toContain("<Code>NoSuchKey</Code>");
    expect(err.body).toContain("<Resource>/auth-tests/no/such key</Resource>");
    expect(err.body).toContain(`<RequestId>${res.headers.get("x-amz-request-id")}</RequestId>`);
  });

  test("unsupported operations are 501 NotImplemented", async () => {
    for (const [method, query] of [
      ["GET", { acl: "" }],
      ["PUT", { versioning: "" }],
      ["GET", { lifecycle: "" }],
    ] as const) {
      const err = await s3Error(await signedFetch(t.s3.url, { method, path: `/${BUCKET}`, query, body: method === "PUT" ? "<x/>" : undefined }));
      expect({ status: err.status, code: err.code }).toEqual({ status: 501, code: "NotImplemented" });
    }
  });
});

describe("payload verification", () => {
  test("hex x-amz-content-sha256 is verified", async () => {
    const res = await signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/sha/ok`, body: "abc" });
    expect(res.status).toBe(200);
    const bad = await s3Error(await signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/sha/bad`, body: "abc", payloadHash: sha256Hex("abd") }));
    expect({ status: bad.status, code: bad.code }).toEqual({ status: 400, code: "XAmzContentSHA256Mismatch" });
    expect(await exists("sha/bad")).toBe(false);
  });

  test("Content-MD5 is verified", async () => {
    const ok = await signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/md5/ok`, body: "abc", headers: { "content-md5": md5Base64("abc") } });
    expect(ok.status).toBe(200);
    const bad = await s3Error(
      await signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/md5/bad`, body: "abc", headers: { "content-md5": md5Base64("abd") } }),
    );
    expect({ status: bad.status, code: bad.code }).toEqual({ status: 400, code: "BadDigest" });
    const sdk = await t.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "md5/bad2", Body: "abc", ContentMD5: md5Base64("xyz") })).then(
      () => "ok",
      (e: { name: string }) => e.name,
    );
    expect(sdk).toBe("BadDigest");
    expect(await exists("md5/bad")).toBe(false);
    expect(await exists("md5/bad2")).toBe(false);
  });

  test("x-amz-checksum-crc32 and -sha256 headers are verified", async () => {
    const crc = (s: string) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(crc32(s));
      return b.toString("base64");
    };
    const ok = await signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/ck/ok`, body: "hello", headers: { "x-amz-checksum-crc32": crc("hello") } });
    expect(ok.status).toBe(200);
    const bad = await s3Error(
      await signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/ck/bad`, body: "hello", headers: { "x-amz-checksum-crc32": crc("hellO") } }),
    );
    expect({ status: bad.status, code: bad.code }).toEqual({ status: 400, code: "BadDigest" });
    const shaB64 = Buffer.from(sha256Hex("nope"), "hex").toString("base64");
    const badSha = await s3Error(
      await signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/ck/bad`, body: "hello", headers: { "x-amz-checksum-sha256": shaB64 } }),
    );
    expect(badSha.code).toBe("BadDigest");
    // Algorithms we do not verify are accepted, not refused.
    const other = await signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/ck/crc64`, body: "hello", headers: { "x-amz-checksum-crc64nvme": "AAAAAAAAAAA=" } });
    expect(other.status).toBe(200);
  });

  /** Build and send an aws-chunked body, signing each chunk with the independent signer. */
  async function sendSignedChunks(key: string, chunks: Buffer[], opts: { trailer?: string; tamper?: boolean } = {}) {
    const signingDate = new Date();
    const u = new URL(t.s3.url);
    const decoded = chunks.reduce((n, c) => n + c.length, 0);
    const mode = opts.trailer ? "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER" : "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
    const sizes = [...chunks.map((c) => c.length), 0];
    const trailerLines = opts.trailer ? `x-amz-checksum-crc32:${opts.trailer}\r\n` : "";
    // chunk header = hex(size) + ";chunk-signature=" + 64 hex + "\r\n"
    let length = sizes.reduce((n, s) => n + s.toString(16).length + 17 + 64 + 2 + s + 2, 0);
    if (opts.trailer) length += -2 + trailerLines.length + "x-amz-trailer-signature:".length + 64 + 2 + 2;
    const headers: Record<string, string> = {
      host: u.host,
      "x-amz-content-sha256": mode,
      "content-encoding": "aws-chunked",
      "x-amz-decoded-content-length": String(decoded),
      "content-length": String(length),
      ...(opts.trailer ? { "x-amz-trailer": "x-amz-checksum-crc32" } : {}),
    };
    const s = signer();
    const signed = await s.sign({ method: "PUT", protocol: "http:", hostname: u.hostname, port: Number(u.port), path: `/${BUCKET}/${key}`, query: {}, headers }, { signingDate });
    let previous = /Signature=([0-9a-f]{64})/.exec(signed.headers.authorization!)![1]!;
    const parts: Buffer[] = [];
    for (const chunk of [...chunks, Buffer.alloc(0)]) {
      const sig = await s.sign({ headers: new Uint8Array(0), payload: chunk }, { signingDate, priorSignature: previous });
      previous = sig;
      const data = opts.tamper && chunk.length > 0 ? Buffer.from(chunk).fill(0x58, 0, 1) : chunk;
      parts.push(Buffer.from(`${chunk.length.toString(16)};chunk-signature=${sig}\r\n`), data);
      if (chunk.length > 0 || !opts.trailer) parts.push(Buffer.from("\r\n"));
    }
    if (opts.trailer) {
      const longDate = signingDate.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
      const scope = `${longDate.slice(0, 8)}/us-east-1/s3/aws4_request`;
      const canonicalTrailer = `x-amz-checksum-crc32:${opts.trailer}\n`;
      const trailerSig = await s.sign(["AWS4-HMAC-SHA256-TRAILER", longDate, scope, previous, sha256Hex(canonicalTrailer)].join("\n"), { signingDate });
      parts.push(Buffer.from(`${trailerLines}x-amz-trailer-signature:${trailerSig}\r\n\r\n`));
    }
    const body = Buffer.concat(parts);
    expect(body.length).toBe(length);
    return fetch(`${t.s3.url}/${BUCKET}/${key}`, { method: "PUT", headers: signed.headers, body });
  }

  test("STREAMING-AWS4-HMAC-SHA256-PAYLOAD: valid chunk signatures are accepted", async () => {
    const chunks = [bytes(64 * 1024, 21), bytes(64 * 1024, 22), bytes(1000, 23)];
    const res = await sendSignedChunks("chunked/signed.bin", chunks);
    expect(res.status).toBe(200);
    const got = Buffer.from(await (await t.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: "chunked/signed.bin" }))).Body!.transformToByteArray());
    expect(got.equals(Buffer.concat(chunks))).toBe(true);
  });

  test("STREAMING-AWS4-HMAC-SHA256-PAYLOAD: a modified chunk is rejected", async () => {
    const err = await s3Error(await sendSignedChunks("chunked/tampered.bin", [bytes(10_000, 24), bytes(500, 25)], { tamper: true }));
    expect({ status: err.status, code: err.code }).toEqual({ status: 403, code: "SignatureDoesNotMatch" });
    expect(await exists("chunked/tampered.bin")).toBe(false);
  });

  test("STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER with a signed checksum trailer", async () => {
    const chunks = [bytes(20_000, 26), bytes(300, 27)];
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat(chunks)));
    const res = await sendSignedChunks("chunked/trailer.bin", chunks, { trailer: crc.toString("base64") });
    expect(res.status).toBe(200);
    const wrong = await s3Error(await sendSignedChunks("chunked/trailer-bad.bin", chunks, { trailer: "AAAAAA==" }));
    expect({ status: wrong.status, code: wrong.code }).toEqual({ status: 400, code: "BadDigest" });
  });

  test("STREAMING-UNSIGNED-PAYLOAD-TRAILER with a wrong trailing checksum is BadDigest", async () => {
    const body = "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n";
    const err = await s3Error(
      await signedFetch(t.s3.url, {
        method: "PUT",
        path: `/${BUCKET}/chunked/unsigned-bad`,
        body,
        payloadHash: "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        headers: { "content-encoding": "aws-chunked", "x-amz-decoded-content-length": "5", "x-amz-trailer": "x-amz-checksum-crc32" },
      }),
    );
    expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: "BadDigest" });
    const truncated = await s3Error(
      await signedFetch(t.s3.url, {
        method: "PUT",
        path: `/${BUCKET}/chunked/unsigned-short`,
        body: "a\r\nhello",
        payloadHash: "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        headers: { "content-encoding": "aws-chunked", "x-amz-decoded-content-length": "10" },
      }),
    );
    expect(truncated.status).toBe(400);
    expect(await exists("chunked/unsigned-bad")).toBe(false);
    expect(await exists("chunked/unsigned-short")).toBe(false);
  });
});
