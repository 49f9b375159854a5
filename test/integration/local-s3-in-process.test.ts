// A client aimed at the embedded node of its own process reads and writes the node's store
// directly (storage/local-s3/in-process.ts): the same answers as over HTTP, the same refusals,
// and only for a client the node would let in.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { inProcessNode } from "../../storage/local-s3/index.ts";
import { S3Storage } from "../../storage/s3.ts";
import { readSmall } from "../../worker/derivatives/source.ts";
import { CREDS, md5Hex, REGION, startTestServer, streamToBuffer, type TestServer } from "./local-s3-helpers.ts";

const BUCKET = "media";
let t: TestServer;
let direct: S3Storage;
let http: S3Storage;

const options = (url: string, inProcess: boolean) => ({
  endpoint: url,
  publicEndpoint: null,
  region: REGION,
  bucket: BUCKET,
  forcePathStyle: true,
  inProcess,
  ...CREDS,
});

beforeAll(async () => {
  t = await startTestServer();
  direct = new S3Storage(options(t.s3.url, true));
  http = new S3Storage(options(t.s3.url, false));
  await direct.ensureBucket();
});
afterAll(async () => {
  direct.client.destroy();
  http.client.destroy();
  await t.cleanup();
});

const read = async (got: { body: ReadableStream<Uint8Array> } | null) => Buffer.from(await new Response(got!.body).arrayBuffer());

describe("in-process GET and PUT", () => {
  test("only a client the node would let in over HTTP: its URL, region and a credential it holds; none once it stopped", async () => {
    expect(inProcessNode(t.s3.url, CREDS, REGION)).not.toBeNull();
    expect(inProcessNode(`${t.s3.url}/`, CREDS, REGION)).not.toBeNull();
    expect(inProcessNode(t.s3.url, { ...CREDS, secretAccessKey: "another secret" }, REGION)).toBeNull();
    expect(inProcessNode(t.s3.url, { ...CREDS, accessKeyId: "AKIAOTHER" }, REGION)).toBeNull();
    expect(inProcessNode(t.s3.url, CREDS, "eu-west-1")).toBeNull();
    expect(inProcessNode(`${t.s3.url}/prefix`, CREDS, REGION)).toBeNull();
    const other = await startTestServer();
    const url = other.s3.url;
    expect(inProcessNode(url, CREDS, REGION)).not.toBeNull();
    await other.cleanup();
    expect(inProcessNode(url, CREDS, REGION)).toBeNull();
  });

  test("a PUT stores what the HTTP path stores: bytes, content type, Cache-Control and the MD5 ETag", async () => {
    const bytes = Buffer.from("thumbnail bytes ".repeat(1000));
    const put = await direct.put("d/one.webp", bytes, { contentType: "image/webp", cacheControl: "public, max-age=60" });
    const viaHttp = await http.put("d/two.webp", bytes, { contentType: "image/webp", cacheControl: "public, max-age=60" });
    expect(put.etag).toBe(`"${md5Hex(bytes)}"`);
    expect(put.etag).toBe(viaHttp.etag);
    for (const Key of ["d/one.webp", "d/two.webp"]) {
      const got = await t.client.send(new GetObjectCommand({ Bucket: BUCKET, Key }));
      expect(got.ContentType).toBe("image/webp");
      expect(got.CacheControl).toBe("public, max-age=60");
      expect(got.ETag).toBe(put.etag!);
      expect(Buffer.compare(await streamToBuffer(got.Body), bytes)).toBe(0);
    }
    // A Blob (a file on disk) is read as it goes, as over HTTP.
    const blob = new Blob([bytes]);
    expect((await direct.put("d/blob.bin", blob, { contentType: "application/octet-stream" })).etag).toBe(put.etag);
  });

  test("a GET answers what the HTTP path answers: bytes, size, type, quoted ETag, modification time", async () => {
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    await t.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: "g/photo.jpg", Body: bytes, ContentType: "image/jpeg" }));
    const head = await t.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: "g/photo.jpg" }));
    const a = await direct.get("g/photo.jpg");
    const b = await http.get("g/photo.jpg");
    expect(a!.info).toEqual(b!.info);
    expect(a!.info).toEqual({ size: bytes.length, contentType: "image/jpeg", etag: head.ETag!, lastModified: head.LastModified! });
    expect(Buffer.compare(await read(a), bytes)).toBe(0);
    expect(Buffer.compare(await read(b), bytes)).toBe(0);
    // An empty object is an empty body.
    await direct.put("g/empty", new Uint8Array(0), { contentType: "text/plain" });
    expect((await read(await direct.get("g/empty"))).length).toBe(0);
  });

  test("a small object's bytes come whole with the answer, and its body is only made if read; a large one streams", async () => {
    const bytes = Buffer.alloc(2 * 1024 * 1024 + 3, 9);
    await direct.put("w/photo.jpg", bytes, { contentType: "image/jpeg" });
    const got = await direct.get("w/photo.jpg");
    expect(Buffer.compare(Buffer.from(got!.bytes!), bytes)).toBe(0);
    // The stream, when read, is the same bytes; over HTTP there are no whole bytes.
    expect(Buffer.compare(await read(got), bytes)).toBe(0);
    expect((await http.get("w/photo.jpg"))!.bytes).toBeUndefined();
    // The worker's reader takes the bytes and never makes the body (each copy of a photo cost
    // milliseconds of the JavaScript thread): a store whose body cannot be read still serves it.
    const noBody = new Proxy(direct, {
      get: (target, prop) =>
        prop === "get"
          ? async (key: string) => {
              const answer = await target.get(key);
              return answer && { info: answer.info, bytes: answer.bytes, get body(): ReadableStream<Uint8Array> { throw new Error("the body was read"); } };
            }
          : Reflect.get(target, prop),
    });
    const small = await readSmall(noBody, "w/photo.jpg", { etag: got!.info.etag, maxBytes: 32 * 1024 * 1024 });
    expect(Buffer.compare(small.bytes, bytes)).toBe(0);
    expect(small.sha256).toBe(new Bun.CryptoHasher("sha256").update(bytes).digest("hex"));
    // Above 32 MiB the node streams from the file: no bytes held whole.
    await direct.put("w/large.bin", Buffer.alloc(32 * 1024 * 1024 + 1, 1), { contentType: "application/octet-stream" });
    const large = await direct.get("w/large.bin");
    expect(large!.bytes).toBeUndefined();
    expect((await read(large)).length).toBe(32 * 1024 * 1024 + 1);
  });

  test("localFile: the file of the current version, removed once replaced; null for a missing key and over HTTP", async () => {
    await direct.put("f/key", Buffer.from("first"), { contentType: "text/plain" });
    const first = (await direct.localFile("f/key"))!;
    expect(first.info).toMatchObject({ size: 5, contentType: "text/plain", etag: `"${md5Hex(Buffer.from("first"))}"` });
    expect(await Bun.file(first.path).text()).toBe("first");
    await direct.put("f/key", Buffer.from("second"), { contentType: "text/plain" });
    expect(await Bun.file(first.path).exists()).toBe(false);
    expect(await Bun.file((await direct.localFile("f/key"))!.path).text()).toBe("second");
    expect(await direct.localFile("f/missing")).toBeNull();
    expect(await http.localFile("f/key")).toBeNull();
  });

  test("the version opened is the version read, even when it is replaced before the bytes are", async () => {
    await direct.put("v/key", Buffer.from("first"), { contentType: "text/plain" });
    const got = await direct.get("v/key");
    await direct.put("v/key", Buffer.from("second, longer"), { contentType: "text/plain" });
    expect((await read(got)).toString()).toBe("first");
    expect((await read(await direct.get("v/key"))).toString()).toBe("second, longer");
  });

  test("a reader that gives up releases the file (the object can still be replaced and deleted)", async () => {
    await direct.put("c/key", Buffer.alloc(1024, 1), { contentType: "application/octet-stream" });
    const got = await direct.get("c/key");
    await got!.body.cancel();
    await direct.delete("c/key");
    expect(await direct.get("c/key")).toBeNull();
  });

  test("refusals are the HTTP path's: a GET of a missing key or bucket is null, a PUT to a missing bucket or an overlong key the same errors", async () => {
    expect(await direct.get("missing/key")).toBeNull();
    expect(await http.get("missing/key")).toBeNull();
    const longKey = "k".repeat(1025);
    const errorOf = (p: Promise<unknown>) => p.then(() => null, (e: { name: string; $metadata?: { httpStatusCode?: number } }) => ({ name: e.name, status: e.$metadata?.httpStatusCode }));
    const tooLong = await errorOf(direct.put(longKey, Buffer.from("x"), { contentType: "text/plain" }));
    expect(tooLong).toEqual({ name: "KeyTooLongError", status: 400 });
    expect(await errorOf(http.put(longKey, Buffer.from("x"), { contentType: "text/plain" }))).toEqual(tooLong);
    const elsewhere = (inProcess: boolean) => new S3Storage({ ...options(t.s3.url, inProcess), bucket: "no-such-bucket" });
    const [d, h] = [elsewhere(true), elsewhere(false)];
    try {
      // A GET's 404 is null, whatever is missing.
      expect(await d.get("k")).toBeNull();
      expect(await h.get("k")).toBeNull();
      const missing = { name: "NoSuchBucket", status: 404 };
      expect(await errorOf(d.put("k", Buffer.from("x"), { contentType: "text/plain" }))).toEqual(missing);
      expect(await errorOf(h.put("k", Buffer.from("x"), { contentType: "text/plain" }))).toEqual(missing);
    } finally {
      d.client.destroy();
      h.client.destroy();
    }
  });

  test("a client holding a wrong secret goes over HTTP and is refused there", async () => {
    const wrong = new S3Storage({ ...options(t.s3.url, true), secretAccessKey: "not the secret" });
    try {
      const err = await wrong.get("g/photo.jpg").catch((e: { $metadata?: { httpStatusCode?: number } }) => e);
      expect((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(403);
    } finally {
      wrong.client.destroy();
    }
  });
});
