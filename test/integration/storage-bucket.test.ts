// The service's own bucket on an S3-compatible store: created at start by whichever process
// gets there first (the API and the worker start together in the production layout).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalS3, startLocalS3 } from "../../storage/local-s3/index.ts";
import { s3Client } from "../support/storage-copy.ts";

const credentials = { accessKeyId: "AKIABUCKETTEST", secretAccessKey: "bucket-test-secret" };
let dir: string;
let node: LocalS3;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bucket-"));
  node = await startLocalS3({ dir, credentials: [credentials] });
});
afterAll(async () => {
  await node?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("processes that start together all find the bucket made: a creation refused as already owned is not an error", async () => {
  // Each finds it missing before any has created it; all but one are then told it is theirs already.
  const starting = Array.from({ length: 4 }, () => s3Client(node.url, credentials, "together"));
  await Promise.all(starting.map((s) => s.ensureBucket()));
  await s3Client(node.url, credentials, "together").ensureBucket();
  const store = s3Client(node.url, credentials, "together");
  await store.put("probe.txt", new TextEncoder().encode("here"), { contentType: "text/plain" });
  expect((await store.head("probe.txt"))?.size).toBe(4);
});
