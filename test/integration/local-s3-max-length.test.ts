// The embedded node's signed maximum (max-content-length): a presigned PUT may carry fewer
// bytes than its URL allows, never more, and the bound cannot be lifted from the URL.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { CreateMultipartUploadCommand, HeadObjectCommand, ListPartsCommand } from "@aws-sdk/client-s3";
import { MAX_LENGTH_PARAM } from "../../storage/local-s3/index.ts";
import { S3Storage } from "../../storage/s3.ts";
import { bytes as buffer, CREDS, REGION, s3Error, signedFetch, startTestServer, type TestServer } from "./local-s3-helpers.ts";

const BUCKET = "bounded";
/** A fetch body of `n` deterministic bytes. */
const bytes = (n: number, seed = 1) => new Uint8Array(buffer(n, seed));
let t: TestServer;
let storage: S3Storage;

beforeAll(async () => {
  t = await startTestServer();
  storage = new S3Storage({ endpoint: t.s3.url, publicEndpoint: null, region: REGION, bucket: BUCKET, forcePathStyle: true, enforcesMaxLength: true, ...CREDS });
  await storage.ensureBucket();
});
afterAll(async () => {
  storage.client.destroy();
  await t.cleanup();
});

const sign = (key: string, maxLength: number) => storage.presignPut(key, { contentType: "application/octet-stream", maxLength, expiresIn: 300, now: new Date() });
const stored = async (key: string) => (await storage.head(key))?.size ?? null;
/** Nothing of a refused body may stay behind, not even a temp file. */
const tempFiles = () => readdirSync(join(t.dataDir, "tmp"));

/** A body of `n` bytes with no length announced: fetch sends it chunked. */
function streamed(n: number, piece = 16 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= n) return controller.close();
      const size = Math.min(piece, n - sent);
      controller.enqueue(bytes(size, sent + 1));
      sent += size;
    },
  });
}

describe("a presigned PUT with a signed maximum", () => {
  test("the maximum is a query parameter of the URL and no length header is signed", () => {
    const put = sign("shape.bin", 1000);
    const url = new URL(put.url);
    expect(url.searchParams.get(MAX_LENGTH_PARAM)).toBe("1000");
    expect(url.searchParams.get("X-Amz-SignedHeaders")).not.toContain("content-length");
    expect(Object.keys(put.headers).map((h) => h.toLowerCase())).not.toContain("content-length");
  });

  test("a shorter body and a body of exactly the maximum are stored", async () => {
    const put = sign("short.bin", 1000);
    expect((await fetch(put.url, { method: "PUT", headers: put.headers, body: bytes(123) })).status).toBe(200);
    expect(await stored("short.bin")).toBe(123);
    expect((await fetch(put.url, { method: "PUT", headers: put.headers, body: bytes(1000) })).status).toBe(200);
    expect(await stored("short.bin")).toBe(1000);
  });

  test("a Content-Length above the maximum is refused up front with EntityTooLarge; nothing is stored", async () => {
    const put = sign("long.bin", 1000);
    const err = await s3Error(await fetch(put.url, { method: "PUT", headers: put.headers, body: bytes(1001) }));
    expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: "EntityTooLarge" });
    expect(err.body).toContain("<MaxSizeAllowed>1000</MaxSizeAllowed>");
    expect(await stored("long.bin")).toBeNull();
  });

  test("a chunked body with no length is refused once it passes the maximum; nothing is stored", async () => {
    const put = sign("stream.bin", 100_000);
    const res = await fetch(put.url, { method: "PUT", headers: put.headers, body: streamed(1024 * 1024) });
    const err = await s3Error(res);
    expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: "EntityTooLarge" });
    expect(await stored("stream.bin")).toBeNull();
    expect(tempFiles()).toEqual([]);
    // Within the maximum, the same chunked PUT is stored with its measured length.
    expect((await fetch(put.url, { method: "PUT", headers: put.headers, body: streamed(99_999) })).status).toBe(200);
    expect(await stored("stream.bin")).toBe(99_999);
  });

  test("an aws-chunked body with no decoded length is refused once it passes the maximum", async () => {
    const chunks = [bytes(600, 3), bytes(600, 4)];
    const body = new Uint8Array(Buffer.concat([...chunks.flatMap((c) => [Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from("\r\n")]), Buffer.from("0\r\n\r\n")]));
    const send = (max: number, key: string) =>
      signedFetch(t.s3.url, {
        method: "PUT",
        path: `/${BUCKET}/${key}`,
        query: { [MAX_LENGTH_PARAM]: String(max) },
        body,
        payloadHash: "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        headers: { "content-encoding": "aws-chunked" },
      });
    const err = await s3Error(await send(1000, "aws-chunked.bin"));
    expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: "EntityTooLarge" });
    expect(await stored("aws-chunked.bin")).toBeNull();
    expect((await send(1200, "aws-chunked.bin")).status).toBe(200);
    expect(await stored("aws-chunked.bin")).toBe(1200);
  });

  test("the maximum is covered by the signature: raised or removed, the URL is refused", async () => {
    const put = sign("tamper.bin", 10);
    const raised = new URL(put.url);
    raised.searchParams.set(MAX_LENGTH_PARAM, "1000000");
    const removed = new URL(put.url);
    removed.searchParams.delete(MAX_LENGTH_PARAM);
    for (const url of [raised, removed]) {
      const err = await s3Error(await fetch(url, { method: "PUT", headers: put.headers, body: bytes(5000) }));
      expect({ status: err.status, code: err.code }).toEqual({ status: 403, code: "SignatureDoesNotMatch" });
    }
    expect(await stored("tamper.bin")).toBeNull();
  });

  test("a maximum that is not a whole number of bytes is an InvalidArgument", async () => {
    const err = await s3Error(await signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/odd.bin`, query: { [MAX_LENGTH_PARAM]: "1e3" }, body: "hello" }));
    expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: "InvalidArgument" });
  });

  test("an upload part is bounded the same way", async () => {
    const { UploadId } = await storage.client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: "parts.bin" }));
    const part = (max: number) =>
      signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/parts.bin`, query: { partNumber: "1", uploadId: UploadId!, [MAX_LENGTH_PARAM]: String(max) }, body: bytes(2000) });
    const err = await s3Error(await part(1999));
    expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: "EntityTooLarge" });
    expect((await storage.client.send(new ListPartsCommand({ Bucket: BUCKET, Key: "parts.bin", UploadId }))).Parts ?? []).toEqual([]);
    expect((await part(2000)).status).toBe(200);
  });

  test("without the capability the adapter signs no maximum (another store would not enforce it)", async () => {
    const plain = new S3Storage({ endpoint: t.s3.url, publicEndpoint: null, region: REGION, bucket: BUCKET, forcePathStyle: true, ...CREDS });
    try {
      const put = plain.presignPut("unbounded.bin", { contentType: "application/octet-stream", maxLength: 10, expiresIn: 300, now: new Date() });
      expect(new URL(put.url).searchParams.has(MAX_LENGTH_PARAM)).toBe(false);
      expect((await fetch(put.url, { method: "PUT", headers: put.headers, body: bytes(5000) })).status).toBe(200);
      expect((await plain.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: "unbounded.bin" }))).ContentLength).toBe(5000);
    } finally {
      plain.client.destroy();
    }
  });
});
