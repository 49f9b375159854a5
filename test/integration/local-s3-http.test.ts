// HTTP semantics: Range and conditional GETs, response overrides, CORS
// preflights and response decoration, and keys that try to escape the data dir.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdir } from "node:fs/promises";
import { request } from "node:http";
import { join, relative } from "node:path";
import {
  CreateBucketCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutBucketCorsCommand,
  PutObjectCommand,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { encodeKey, s3Error, sha256Hex, signedFetch, signer, startTestServer, type TestServer } from "./local-s3-helpers.ts";

let t: TestServer;
const BUCKET = "http-tests";
const BODY = "0123456789abcdefghijklmnopqrstuvwxyz";

beforeAll(async () => {
  t = await startTestServer();
  await t.client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await t.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "alpha.txt", Body: BODY, ContentType: "text/plain", Metadata: { kind: "fixture" } }));
});
afterAll(async () => {
  await t.cleanup();
});

const get = (key: string, headers: Record<string, string> = {}, query?: Record<string, string>) =>
  signedFetch(t.s3.url, { method: "GET", path: `/${BUCKET}/${encodeKey(key)}`, headers, query });

describe("range requests", () => {
  test.each([
    ["bytes=0-4", "01234", "bytes 0-4/36"],
    ["bytes=30-", "uvwxyz", "bytes 30-35/36"],
    ["bytes=-3", "xyz", "bytes 33-35/36"],
    ["bytes=34-1000", "yz", "bytes 34-35/36"],
    ["bytes=-100", BODY, "bytes 0-35/36"],
  ])("%s", async (range, body, contentRange) => {
    const res = await get("alpha.txt", { range });
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe(contentRange);
    expect(res.headers.get("content-length")).toBe(String(body.length));
    expect(await res.text()).toBe(body);
  });

  test("unsatisfiable ranges are 416 InvalidRange", async () => {
    for (const range of ["bytes=36-", "bytes=100-200", "bytes=-0"]) {
      const res = await get("alpha.txt", { range });
      expect(res.headers.get("content-range")).toBe("bytes */36");
      const err = await s3Error(res);
      expect({ status: err.status, code: err.code }).toEqual({ status: 416, code: "InvalidRange" });
    }
  });

  test("malformed or multi-range headers are ignored (full body)", async () => {
    for (const range of ["bytes=5-2", "items=0-1", "bytes=0-1,4-5"]) {
      const res = await get("alpha.txt", { range });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(BODY);
    }
  });

  test("via the SDK", async () => {
    const r = await t.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: "alpha.txt", Range: "bytes=10-15" }));
    expect(r.ContentRange).toBe("bytes 10-15/36");
    expect(r.ContentLength).toBe(6);
    expect(await r.Body!.transformToString()).toBe("abcdef");
  });
});

describe("GET/HEAD headers and conditions", () => {
  test("full GET and HEAD carry the representation headers", async () => {
    const res = await get("alpha.txt");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe("36");
    expect(res.headers.get("content-type")).toBe("text/plain");
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("x-amz-meta-kind")).toBe("fixture");
    expect(res.headers.get("last-modified")).toMatch(/GMT$/);
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(res.headers.get("content-disposition")).toBeNull();
    expect(await res.text()).toBe(BODY);
    const head = await signedFetch(t.s3.url, { method: "HEAD", path: `/${BUCKET}/alpha.txt` });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("36");
    expect(head.headers.get("etag")).toBe(res.headers.get("etag"));
    expect(await head.text()).toBe("");
    const missing = await signedFetch(t.s3.url, { method: "HEAD", path: `/${BUCKET}/missing` });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-amz-request-id")).toBeTruthy();
  });

  test("If-None-Match gives 304, If-Match mismatch gives 412", async () => {
    const etag = (await get("alpha.txt")).headers.get("etag")!;
    expect((await get("alpha.txt", { "if-none-match": etag })).status).toBe(304);
    expect((await get("alpha.txt", { "if-none-match": '"other"' })).status).toBe(200);
    expect((await get("alpha.txt", { "if-match": etag })).status).toBe(200);
    const failed = await s3Error(await get("alpha.txt", { "if-match": '"other"' }));
    expect({ status: failed.status, code: failed.code }).toEqual({ status: 412, code: "PreconditionFailed" });
    const lm = (await get("alpha.txt")).headers.get("last-modified")!;
    expect((await get("alpha.txt", { "if-modified-since": lm })).status).toBe(304);
    expect((await get("alpha.txt", { "if-unmodified-since": new Date(Date.parse(lm) - 60_000).toUTCString() })).status).toBe(412);
    // through the SDK
    const sdk = await t.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: "alpha.txt", IfNoneMatch: etag })).then(
      () => 200,
      (e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode,
    );
    expect(sdk).toBe(304);
  });

  test("response-* query parameters override headers", async () => {
    const r = await t.client.send(
      new GetObjectCommand({
        Bucket: BUCKET,
        Key: "alpha.txt",
        ResponseContentType: "application/x-download",
        ResponseContentDisposition: 'attachment; filename="a.txt"',
        ResponseCacheControl: "no-store",
      }),
    );
    expect(r.ContentType).toBe("application/x-download");
    expect(r.ContentDisposition).toBe('attachment; filename="a.txt"');
    expect(r.CacheControl).toBe("no-store");
    await r.Body!.transformToString();
  });

  test("conditional PUT: If-None-Match: * refuses to overwrite", async () => {
    const first = await signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/once.txt`, body: "1", headers: { "if-none-match": "*" } });
    expect(first.status).toBe(200);
    const second = await s3Error(await signedFetch(t.s3.url, { method: "PUT", path: `/${BUCKET}/once.txt`, body: "2", headers: { "if-none-match": "*" } }));
    expect(second.status).toBe(412);
    expect(await (await get("once.txt")).text()).toBe("1");
  });
});

describe("CORS", () => {
  beforeAll(async () => {
    await t.client.send(
      new PutBucketCorsCommand({
        Bucket: BUCKET,
        CORSConfiguration: {
          CORSRules: [
            {
              AllowedOrigins: ["https://app.example.com", "https://*.preview.example.com"],
              AllowedMethods: ["GET", "PUT", "HEAD"],
              AllowedHeaders: ["content-type", "x-amz-*"],
              ExposeHeaders: ["ETag", "x-amz-request-id"],
              MaxAgeSeconds: 3000,
            },
            { AllowedOrigins: ["*"], AllowedMethods: ["GET"] },
          ],
        },
      }),
    );
  });

  const preflight = (origin: string | undefined, method: string, requestHeaders?: string) =>
    fetch(`${t.s3.url}/${BUCKET}/uploads/new.png`, {
      method: "OPTIONS",
      headers: {
        ...(origin ? { origin } : {}),
        "access-control-request-method": method,
        ...(requestHeaders ? { "access-control-request-headers": requestHeaders } : {}),
      },
    });

  test("an allowed preflight gets the rule's headers", async () => {
    const res = await preflight("https://app.example.com", "PUT", "Content-Type, X-Amz-Tagging");
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(res.headers.get("access-control-allow-methods")).toBe("GET, PUT, HEAD");
    expect(res.headers.get("access-control-allow-headers")).toBe("content-type, x-amz-tagging");
    expect(res.headers.get("access-control-expose-headers")).toBe("ETag, x-amz-request-id");
    expect(res.headers.get("access-control-max-age")).toBe("3000");
    expect(res.headers.get("access-control-allow-credentials")).toBe("true");
    expect(res.headers.get("vary")).toContain("Origin");
    expect(res.headers.get("x-amz-request-id")).toBeTruthy();
    const wildcard = await preflight("https://pr-12.preview.example.com", "PUT", "content-type");
    expect(wildcard.status).toBe(200);
    expect(wildcard.headers.get("access-control-allow-origin")).toBe("https://pr-12.preview.example.com");
    const anyOrigin = await preflight("https://elsewhere.test", "GET");
    expect(anyOrigin.status).toBe(200);
    expect(anyOrigin.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("preflights no rule allows are 403", async () => {
    for (const [origin, method, headers] of [
      ["https://evil.test", "PUT", "content-type"],
      ["https://app.example.com", "DELETE", undefined],
      ["https://app.example.com", "PUT", "content-type, authorization-x"],
    ] as const) {
      const err = await s3Error(await preflight(origin, method, headers));
      expect({ status: err.status, code: err.code }).toEqual({ status: 403, code: "AccessForbidden" });
    }
    expect((await preflight(undefined, "GET")).status).toBe(400);
  });

  test("a bucket without CORS rejects preflights", async () => {
    await t.client.send(new CreateBucketCommand({ Bucket: "no-cors" }));
    const res = await fetch(`${t.s3.url}/no-cors/x`, { method: "OPTIONS", headers: { origin: "https://app.example.com", "access-control-request-method": "GET" } });
    expect(res.status).toBe(403);
  });

  test("actual responses are decorated, errors included", async () => {
    const url = await getSignedUrl(t.client, new GetObjectCommand({ Bucket: BUCKET, Key: "alpha.txt" }), { expiresIn: 60 });
    const res = await fetch(url, { headers: { origin: "https://app.example.com" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(res.headers.get("access-control-expose-headers")).toBe("ETag, x-amz-request-id");
    await res.text();
    const denied = await fetch(`${t.s3.url}/${BUCKET}/alpha.txt`, { headers: { origin: "https://app.example.com" } });
    expect(denied.status).toBe(403);
    expect(denied.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    const noOrigin = await fetch(url);
    expect(noOrigin.headers.get("access-control-allow-origin")).toBeNull();
    await noOrigin.text();
  });
});

describe("keys cannot escape the data directory", () => {
  const hostile = [
    "../../escape.txt",
    "../../../../../../tmp/local-s3-escape.txt",
    "a/../../../escape2.txt",
    "./././x",
    "..",
    "..\\..\\windows.txt",
    "%2e%2e/%2e%2e/encoded.txt",
    "/leading/slash",
    "nul\u0001byte",
  ];

  test("hostile keys are stored, listed and read back as plain keys", async () => {
    for (const key of hostile) {
      await t.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: `content:${key}`, Tagging: "hostile=yes" }));
      const got = await t.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      expect(await got.Body!.transformToString()).toBe(`content:${key}`);
      const tags = await t.client.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: key }));
      expect(tags.TagSet).toEqual([{ Key: "hostile", Value: "yes" }]);
    }
    const listed = (await t.client.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents!.map((c) => c.Key);
    for (const key of hostile) expect(listed).toContain(key);
    // "../x" is its own key, not an alias of "x"
    await expectMissing("escape.txt");
  });

  async function expectMissing(key: string) {
    const status = await t.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })).then(
      () => 200,
      (e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode,
    );
    expect(status).toBe(404);
  }

  test("nothing was written outside the data dir", async () => {
    const outside = (await readdir(t.root)).filter((n) => n !== "data");
    expect(outside).toEqual([]);
    const all = await readdir(t.dataDir, { recursive: true });
    for (const f of all) {
      const rel = relative(t.dataDir, join(t.dataDir, f));
      expect(rel.startsWith("..")).toBe(false);
      // on-disk names are hashes, never derived from key text
      expect(f).not.toContain("escape");
    }
    expect(await Bun.file("/tmp/local-s3-escape.txt").exists()).toBe(false);
  });

  test("a raw request with dot segments addresses the literal key", async () => {
    // fetch() would resolve "..", so send the request target verbatim with node:http.
    const u = new URL(t.s3.url);
    const path = `/${BUCKET}/../../escape.txt`;
    const signed = await signer().sign(
      { method: "GET", protocol: "http:", hostname: u.hostname, port: Number(u.port), path, query: {}, headers: { host: u.host, "x-amz-content-sha256": sha256Hex("") } },
      { signingDate: new Date() },
    );
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: u.hostname, port: Number(u.port), method: "GET", path, headers: signed.headers }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      });
      req.on("error", reject);
      req.end();
    });
    expect({ status, body }).toEqual({ status: 200, body: "content:../../escape.txt" });
  });
});
