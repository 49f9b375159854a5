import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalS3, startLocalS3 } from "../../storage/local-s3/index.ts";
import { type FaultProxy, faultProxy } from "../support/faults.ts";
import type { ApiResponse } from "../support/http.ts";
import { freePort } from "../support/processes.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { bytesOf, upload } from "../support/upload.ts";

/**
 * Storage unreachable. Presigning is signing only, so it still answers;
 * confirm needs storage (it reads what was uploaded), so it answers 503 `unavailable` in the
 * envelope, promptly, and succeeds when retried once storage is back. The storage node is a
 * separate one of this file (S3_ENDPOINT), so the server is a client of it like of any S3.
 */

/** Not a timing assertion: a bound far above a healthy answer, so a hung request fails the test. */
const HANG_MS = 10_000;
const credentials = { accessKeyId: "FAULTSTORAGEKEY", secretAccessKey: "fault-storage-secret-0123456789" };

async function timed(api: TestOrg["admin"], path: string, body: unknown): Promise<ApiResponse> {
  const res = await fetch(`${api.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${api.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(HANG_MS),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

function expectUnavailable(res: ApiResponse) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 503, code: "unavailable" });
  expect(res.body.error.requestId).toBe(res.headers.get("x-request-id"));
  expect(JSON.stringify(res.body)).not.toMatch(/ECONN|127\.0\.0\.1|socket/i);
}

describe("storage node stopped and started again", () => {
  let dir: string;
  let port: number;
  let node: LocalS3 | null = null;
  let server: TestServer;
  let org: TestOrg;
  let bucket: { id: string };

  const startNode = async () => {
    node = await startLocalS3({ dir, port, credentials: [credentials] });
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "media-fault-s3-"));
    port = await freePort();
    await startNode();
    server = await startServer({
      env: {
        S3_ENDPOINT: node!.url,
        S3_ACCESS_KEY_ID: credentials.accessKeyId,
        S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
        S3_TIMEOUT_MS: "2000",
      },
    });
    org = await newOrg(server);
    bucket = (await org.admin.post("/api/buckets", { name: "storage-faults" })).body;
    await upload(org.admin, bucket.id, "before.txt", bytesOf(10), { contentType: "text/plain" });
  });
  afterAll(async () => {
    await server?.stop();
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("while it is down presign answers, confirm is 503 unavailable; the same confirm succeeds once it is back", async () => {
    // The bytes are in storage; then storage goes away before the client confirms.
    const presigned = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "late.bin", contentType: "application/octet-stream" });
    expect((await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body: bytesOf(300) })).status).toBe(200);
    await node!.stop();
    node = null;

    const signed = await timed(org.admin, "/api/presign/upload", { bucketId: bucket.id, key: "while-down.bin" });
    expect(signed.status).toBe(200);
    expect(signed.body.url).toContain(`/media/${bucket.id}/while-down.bin`);

    const refused = await timed(org.admin, "/api/presign/confirm", { bucketId: bucket.id, key: "late.bin" });
    expectUnavailable(refused);
    // Nothing was recorded by the failed confirm.
    expect((await org.admin.get(`/api/media?bucketId=${bucket.id}`)).body.data.map((m: { key: string }) => m.key)).toEqual(["before.txt"]);
    expect((await org.admin.get("/api/usage")).body.usedStorage).toBe(10);

    await startNode();
    const retried = await timed(org.admin, "/api/presign/confirm", { bucketId: bucket.id, key: "late.bin" });
    expect(retried.status).toBe(200);
    expect(retried.body.size).toBe(300);
    expect((await org.admin.get("/api/usage")).body.usedStorage).toBe(310);
  }, 30_000);
});

describe("storage that accepts connections and never answers", () => {
  let dir: string;
  let node: LocalS3;
  let proxy: FaultProxy;
  let server: TestServer;
  let org: TestOrg;
  let bucket: { id: string };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "media-fault-s3-"));
    node = await startLocalS3({ dir, credentials: [credentials] });
    proxy = faultProxy(node.port);
    server = await startServer({
      env: {
        S3_ENDPOINT: proxy.url,
        S3_ACCESS_KEY_ID: credentials.accessKeyId,
        S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
        S3_TIMEOUT_MS: "1000",
      },
    });
    org = await newOrg(server);
    bucket = (await org.admin.post("/api/buckets", { name: "hung-storage" })).body;
  });
  afterAll(async () => {
    await server?.stop();
    proxy?.stop();
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("confirm gives up at the storage deadline with 503 unavailable instead of hanging, and works once storage answers again", async () => {
    const presigned = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "hung.bin" });
    expect((await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body: bytesOf(70) })).status).toBe(200);

    proxy.setMode("hang");
    expect((await timed(org.admin, "/api/presign/upload", { bucketId: bucket.id, key: "other.bin" })).status).toBe(200);
    expectUnavailable(await timed(org.admin, "/api/presign/confirm", { bucketId: bucket.id, key: "hung.bin" }));

    proxy.setMode("pass");
    const retried = await timed(org.admin, "/api/presign/confirm", { bucketId: bucket.id, key: "hung.bin" });
    expect(retried.status).toBe(200);
    expect(retried.body.size).toBe(70);
  }, 30_000);
});

describe("a presign that must ask a hung store what the key holds", () => {
  test("waits at most 2 s for its HEAD, then signs the catalogue's view, well before the storage deadline", async () => {
    const dir = mkdtempSync(join(tmpdir(), "media-fault-s3-"));
    const node = await startLocalS3({ dir, credentials: [credentials] });
    const proxy = faultProxy(node.port);
    // A storage deadline far above HANG_MS: only the presign's own 2 s bound can answer in time.
    const server = await startServer({
      env: { S3_ENDPOINT: proxy.url, S3_ACCESS_KEY_ID: credentials.accessKeyId, S3_SECRET_ACCESS_KEY: credentials.secretAccessKey, S3_TIMEOUT_MS: "60000" },
    });
    try {
      const org = await newOrg(server);
      const bucket = (await org.admin.post("/api/buckets", { name: "unsure" })).body;
      // Bytes PUT and never confirmed: the catalogue cannot know what the key holds.
      const first = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "unsure.bin" });
      expect((await fetch(first.body.url, { method: "PUT", headers: first.body.headers, body: bytesOf(70) })).status).toBe(200);
      proxy.setMode("hang");
      const again = await timed(org.admin, "/api/presign/upload", { bucketId: bucket.id, key: "unsure.bin" });
      expect(again.status).toBe(200);
      expect(again.body.headers["If-None-Match"]).toBe("*");
    } finally {
      proxy.setMode("pass");
      await server.stop();
      proxy.stop();
      await node.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
