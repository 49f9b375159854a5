/**
 * A declared `size` is an optimistic quota reservation and an upper bound, never an exact
 * length (docs/conventions.md, "Quota"): a shorter body uploads with exactly the returned
 * headers and confirm records its true size. Bytes above the declared size never get past the
 * quota: the embedded node refuses them at the PUT (a maximum signed into the URL), and on a
 * store that bounds nothing confirm measures them, counting what fits the allocation and
 * refusing and deleting what does not.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { mediaObjects, orgUsage } from "../../db/schema/index.ts";
import { objectPath } from "../../domain/media/storage-keys.ts";
import { liveUsage } from "../../domain/usage/counters.ts";
import { MAX_LENGTH_PARAM } from "../../storage/local-s3/index.ts";
import { newBucket } from "../support/objects.ts";
import { type OtherStore, otherStore } from "../support/other-store.ts";
import { newOrg, startServer, type TestServer } from "../support/server.ts";
import { bytesOf } from "../support/upload.ts";

const MiB = 1024 * 1024;

/** Stands for any S3-compatible store: the service reaches it through S3_ENDPOINT, so it signs no maximum. */
let store: OtherStore;
let embedded: TestServer;
let unbounded: TestServer;

beforeAll(async () => {
  store = await otherStore();
  [embedded, unbounded] = await Promise.all([startServer(), startServer({ env: store.env() })]);
}, 120_000);
afterAll(async () => {
  await Promise.all([embedded?.stop(), unbounded?.stop()]);
  await store?.stop();
});

/** An organization with a bucket, optionally on a smaller allocation. */
async function orgOn(server: TestServer, allocated?: number) {
  const org = await newOrg(server);
  const bucket = await newBucket(org);
  if (allocated !== undefined) await server.services.deps.db.update(orgUsage).set({ allocatedStorage: allocated }).where(eq(orgUsage.orgId, org.orgId));
  const usage = async () => (await liveUsage(server.services.deps.db, org.orgId))!;
  const stored = (key: string) => server.services.deps.storage.head(objectPath(bucket.id, key));
  const presign = (key: string, size?: number) => org.admin.post("/api/presign/upload", { bucketId: bucket.id, key, ...(size === undefined ? {} : { size }) });
  const confirm = (key: string) => org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key });
  return { org, bucket, usage, stored, presign, confirm };
}

const put = (url: string, headers: Record<string, string>, body: Uint8Array<ArrayBuffer>) => fetch(url, { method: "PUT", headers, body });
const s3Code = async (res: Response) => /<Code>([^<]+)<\/Code>/.exec(await res.text())?.[1];

/** Declare 999999, PUT 1234 bytes with exactly the returned headers: confirm records 1234 and gives the reservation back. */
async function smallerThanDeclared(server: TestServer) {
  const o = await orgOn(server);
  const before = await o.usage();
  const p = await o.presign("smaller.bin", 999_999);
  expect(p.status).toBe(200);
  expect(Object.keys(p.body.headers).map((h: string) => h.toLowerCase())).not.toContain("content-length");
  expect(new URL(p.body.url).searchParams.get("X-Amz-SignedHeaders")).not.toContain("content-length");
  expect((await o.usage()).reservedStorage).toBe(before.reservedStorage + 999_999);
  expect((await put(p.body.url, p.body.headers, bytesOf(1234))).status).toBe(200);
  const confirmed = await o.confirm("smaller.bin");
  expect(confirmed.status).toBe(200);
  expect(confirmed.body.size).toBe(1234);
  const after = await o.usage();
  expect(after.reservedStorage).toBe(before.reservedStorage);
  expect(after.usedStorage).toBe(before.usedStorage + 1234);
  return p.body;
}

describe("on the embedded storage node", () => {
  test("a body smaller than the declared size uploads and confirms with its true size", async () => {
    const presigned = await smallerThanDeclared(embedded);
    expect(new URL(presigned.url).searchParams.get(MAX_LENGTH_PARAM)).toBe("999999");
  });

  test("curl sending exactly the returned headers (as the README does) uploads fewer bytes than declared", async () => {
    const o = await orgOn(embedded);
    const p = await o.presign("curl.bin", 999_999);
    const dir = mkdtempSync(join(tmpdir(), "media-curl-"));
    try {
      writeFileSync(join(dir, "headers.txt"), Object.entries(p.body.headers).map(([k, v]) => `${k}: ${v}\n`).join(""));
      writeFileSync(join(dir, "file.bin"), bytesOf(1234));
      const curl = Bun.spawn(["curl", "-s", "--max-time", "120", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT", p.body.url, "-H", "@headers.txt", "--data-binary", "@file.bin"], {
        cwd: dir,
        stdout: "pipe",
      });
      expect(await new Response(curl.stdout).text()).toBe("200");
      expect(await curl.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect((await o.confirm("curl.bin")).body.size).toBe(1234);
  });

  test("a body above the declared size is refused at the PUT (400 EntityTooLarge) and nothing is stored", async () => {
    const o = await orgOn(embedded);
    const p = await o.presign("larger.bin", 1000);
    const refused = await put(p.body.url, p.body.headers, bytesOf(5000));
    expect(refused.status).toBe(400);
    expect(await s3Code(refused)).toBe("EntityTooLarge");
    expect(await o.stored("larger.bin")).toBeNull();
    expect((await o.confirm("larger.bin")).status).toBe(404);
    // The URL still takes bytes within its bound.
    expect((await put(p.body.url, p.body.headers, bytesOf(1000))).status).toBe(200);
    expect((await o.confirm("larger.bin")).body.size).toBe(1000);
  });

  test("a streamed body with no length is refused once it passes the declared size", async () => {
    const o = await orgOn(embedded);
    const p = await o.presign("streamed.bin", 64 * 1024);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 16; i++) controller.enqueue(bytesOf(16 * 1024, i));
        controller.close();
      },
    });
    const refused = await fetch(p.body.url, { method: "PUT", headers: p.body.headers, body });
    expect(refused.status).toBe(400);
    expect(await s3Code(refused)).toBe("EntityTooLarge");
    expect(await o.stored("streamed.bin")).toBeNull();
  });

  test("without a size the URL is still bounded, by UPLOAD_UNSIZED_MAX_BYTES (64 MiB by default)", async () => {
    const o = await orgOn(embedded);
    const p = await o.presign("unsized.bin");
    expect(embedded.config.uploadUnsizedMaxBytes).toBe(64 * MiB);
    expect(new URL(p.body.url).searchParams.get(MAX_LENGTH_PARAM)).toBe(String(64 * MiB));
    expect((await put(p.body.url, p.body.headers, bytesOf(3000))).status).toBe(200);
    expect((await o.confirm("unsized.bin")).body.size).toBe(3000);
  });

  test("a multipart part URL signs no Content-Length: a part of any size within its maximum is taken and measured at complete-upload", async () => {
    const o = await orgOn(embedded);
    const created = await o.org.admin.post("/api/presign/create-multipart", { bucketId: o.bucket.id, key: "parts.bin", size: 10 });
    const part = await o.org.admin.post("/api/presign/upload-part", { bucketId: o.bucket.id, key: "parts.bin", uploadId: created.body.uploadId, partNumber: 1 });
    expect(Object.keys(part.body.headers).map((h: string) => h.toLowerCase())).not.toContain("content-length");
    expect(new URL(part.body.url).searchParams.get("X-Amz-SignedHeaders")).not.toContain("content-length");
    expect((await put(part.body.url, part.body.headers, bytesOf(4000))).status).toBe(200);
    const completed = await o.org.admin.post("/api/presign/complete-upload", { bucketId: o.bucket.id, key: "parts.bin", uploadId: created.body.uploadId });
    expect(completed.status).toBe(200);
    expect((await o.confirm("parts.bin")).body.size).toBe(4000);
  });
});

describe("on a store that does not enforce the bound (S3_ENDPOINT)", () => {
  test("the URL carries no maximum, and a smaller body confirms with its true size", async () => {
    const presigned = await smallerThanDeclared(unbounded);
    expect(new URL(presigned.url).searchParams.has(MAX_LENGTH_PARAM)).toBe(false);
  });

  test("a body above the declared size is stored, and confirm counts it when it fits the allocation", async () => {
    const o = await orgOn(unbounded);
    const before = await o.usage();
    const p = await o.presign("grown.bin", 10);
    expect((await put(p.body.url, p.body.headers, bytesOf(5000))).status).toBe(200);
    const confirmed = await o.confirm("grown.bin");
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.size).toBe(5000);
    const after = await o.usage();
    expect(after.usedStorage).toBe(before.usedStorage + 5000);
    expect(after.reservedStorage).toBe(before.reservedStorage);
  });

  test("a body above the declared size that does not fit the allocation is refused at confirm (403) and deleted", async () => {
    const o = await orgOn(unbounded, MiB);
    const p = await o.presign("toolarge.bin", 10);
    expect((await put(p.body.url, p.body.headers, bytesOf(2 * MiB))).status).toBe(200);
    const before = await o.usage();
    expect(before.reservedStorage).toBe(10);
    const refused = await o.confirm("toolarge.bin");
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("quota_exceeded");
    expect(await o.stored("toolarge.bin")).toBeNull();
    const rows = await unbounded.services.deps.db.select().from(mediaObjects).where(eq(mediaObjects.bucketId, o.bucket.id));
    expect(rows).toEqual([]);
    const after = await o.usage();
    expect(after.usedStorage).toBe(before.usedStorage);
    expect(after.reservedStorage).toBe(0);
    // What fits is recorded as before.
    const small = await o.presign("small.bin", 1000);
    expect((await put(small.body.url, small.body.headers, bytesOf(1000))).status).toBe(200);
    expect((await o.confirm("small.bin")).body.size).toBe(1000);
  });
});
