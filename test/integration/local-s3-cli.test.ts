// Interoperability with an independent client: the aws CLI (v1, python botocore)
// does multipart uploads, ranged parallel downloads and its own SigV4 signing.
// Skipped only when no `aws` binary is on PATH.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand } from "@aws-sdk/client-s3";
import { bytes, CREDS, md5Hex, REGION, startTestServer, type TestServer } from "./local-s3-helpers.ts";

const AWS = Bun.which("aws");
if (!AWS) console.warn("local-s3-cli: `aws` binary not found on PATH; skipping the aws CLI interoperability tests");

let t: TestServer;
const BUCKET = "cli-tests";

async function aws(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AWS_")) env[k] = v;
  Object.assign(env, {
    AWS_ACCESS_KEY_ID: CREDS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey,
    AWS_DEFAULT_REGION: REGION,
    AWS_CONFIG_FILE: "/dev/null",
    AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
    AWS_EC2_METADATA_DISABLED: "true",
    AWS_PAGER: "",
  });
  const proc = Bun.spawn([AWS!, "--endpoint-url", t.s3.url, ...args], { env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

describe.skipIf(!AWS)("aws CLI (botocore)", () => {
  beforeAll(async () => {
    t = await startTestServer();
    await t.client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const data = bytes(12 * 1024 * 1024 + 12345, 99);

  test(
    "s3 cp uploads a 12 MiB file (multipart) and downloads it back",
    async () => {
      const src = join(t.root, "upload.bin");
      const dst = join(t.root, "download.bin");
      await writeFile(src, data);
      const up = await aws("s3", "cp", src, `s3://${BUCKET}/cli/big file.bin`, "--content-type", "application/x-cli");
      expect(up.stderr).toBe("");
      expect(up.code).toBe(0);

      const head = await t.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: "cli/big file.bin" }));
      expect(head.ContentLength).toBe(data.length);
      expect(head.ContentType).toBe("application/x-cli");
      expect(head.ETag).toMatch(/-2"$/); // 8 MiB default chunk size: two parts

      const down = await aws("s3", "cp", `s3://${BUCKET}/cli/big file.bin`, dst);
      expect(down.stderr).toBe("");
      expect(down.code).toBe(0);
      const got = await readFile(dst);
      expect(got.length).toBe(data.length);
      expect(md5Hex(got)).toBe(md5Hex(data));
    },
    120_000,
  );

  test(
    "s3api head-object, put-object with tagging, s3 ls and rm",
    async () => {
      const head = await aws("s3api", "head-object", "--bucket", BUCKET, "--key", "cli/big file.bin");
      expect(head.code).toBe(0);
      const parsed = JSON.parse(head.stdout) as { ContentLength: number; ETag: string; ContentType: string };
      expect(parsed.ContentLength).toBe(data.length);
      expect(parsed.ContentType).toBe("application/x-cli");

      const small = join(t.root, "small.txt");
      await writeFile(small, "small+file body");
      const put = await aws("s3api", "put-object", "--bucket", BUCKET, "--key", "cli/a+b c.txt", "--body", small, "--tagging", "via=cli&n=1");
      expect(put.stderr).toBe("");
      expect(put.code).toBe(0);
      const got = await t.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: "cli/a+b c.txt" }));
      expect(await got.Body!.transformToString()).toBe("small+file body");
      expect(got.TagCount).toBe(2);

      const ls = await aws("s3", "ls", `s3://${BUCKET}/cli/`);
      expect(ls.code).toBe(0);
      expect(ls.stdout).toContain("big file.bin");
      expect(ls.stdout).toContain("a+b c.txt");

      const rm = await aws("s3", "rm", `s3://${BUCKET}/cli/a+b c.txt`);
      expect(rm.code).toBe(0);
      const missing = await aws("s3api", "head-object", "--bucket", BUCKET, "--key", "cli/a+b c.txt");
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain("404");
    },
    120_000,
  );
});
