import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetObjectTaggingCommand } from "@aws-sdk/client-s3";
import type { S3Storage } from "../../storage/s3.ts";
import { cliJsonHere, removeTempConfigHomes, runCli, runCliHere, tempConfigHome } from "../support/cli.ts";
import { withServerAndOrg } from "../support/fixtures.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { sha256 } from "../support/upload.ts";

// One pass: the CLI's transfers (parts, resume, retries) speak REST and S3; the upload API on both
// backends is the integration tests' business.

setDefaultTimeout(120_000);

const MiB = 1024 * 1024;
let server: TestServer;
let org: TestOrg;
let bucket: { id: string; name: string };
let base: { url: string; key: string };
const dir = mkdtempSync(join(tmpdir(), "media-cli-files-"));

withServerAndOrg({
  ready: async (made) => {
    ({ server, org } = made);
    base = { url: server.url, key: org.adminKey.secret };
    bucket = (await org.admin.post("/api/buckets", { name: "cli-uploads" })).body;
  },
  cleanup: () => {
    rmSync(dir, { recursive: true, force: true });
    removeTempConfigHomes();
  },
});

function file(name: string, size: number): { path: string; hash: string } {
  const path = join(dir, name);
  const bytes = randomBytes(size);
  writeFileSync(path, bytes);
  return { path, hash: sha256(bytes) };
}

const multipart = ["--threshold", "5MiB", "--part-size", "5MiB"];

describe("media upload / media download", () => {
  test("a 12 MiB file goes multipart in 5 MiB parts; the download has the same SHA-256", async () => {
    const src = file("clip.bin", 12 * MiB);
    const [result] = await cliJsonHere(["upload", src.path, "--bucket", bucket.id, "--key", "videos/clip.bin", ...multipart], base);
    expect(result.key).toBe("videos/clip.bin");
    expect(result.size).toBe(12 * MiB);
    expect(result.multipart).toBe(true);
    expect(result.parts).toBe(3);
    expect(result.partsUploaded).toBe(3);
    expect(result.partsReused).toBe(0);
    const stored = await org.admin.get(`/api/media/${result.id}`);
    expect(stored.body).toMatchObject({ size: 12 * MiB, key: "videos/clip.bin" });
    expect(stored.body.etag).toMatch(/-3"$/);

    const out = join(dir, "clip.downloaded");
    const dl = await cliJsonHere(["download", result.id, "-o", out], base);
    expect(dl).toEqual({ id: result.id, key: "videos/clip.bin", file: out, size: 12 * MiB });
    expect(sha256(readFileSync(out))).toBe(src.hash);
    // no half-written file is left behind, and an existing file is not overwritten without --force
    expect(existsSync(`${out}.part`)).toBe(false);
    const again = await runCliHere(["download", result.id, "-o", out], base);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("use --force");
    expect((await runCliHere(["download", result.id, "-o", out, "--force"], base)).code).toBe(0);
  });

  test("a small file goes in one PUT, with its type detected from the bytes; stdout download", async () => {
    const png = join(dir, "pixel.data");
    writeFileSync(png, Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(100)]));
    const [result] = await cliJsonHere(["upload", png, "--bucket", bucket.name, "--prefix", "img", "--tags", "cli,pixel"], base);
    expect(result).toMatchObject({ key: "img/pixel.data", contentType: "image/png", kind: "image", multipart: false, size: 108 });
    // the labels travel with the upload as storage tags and become the object's tags at confirm
    expect((await org.admin.get(`/api/media/${result.id}`)).body.tags.map((t: { name: string }) => t.name).sort()).toEqual(["cli", "pixel"]);
    const storage = (server.services.deps.storage as S3Storage).client;
    const tagging = await storage.send(new GetObjectTaggingCommand({ Bucket: server.config.s3.bucket, Key: `${bucket.id}/img/pixel.data` }));
    expect(tagging.TagSet?.map((t) => t.Key).sort()).toEqual(["cli", "pixel"]);
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../../cli/main.ts"), "download", result.id, "-o", "-"], {
      env: { PATH: process.env.PATH ?? "", XDG_CONFIG_HOME: tempConfigHome(), MEDIA_URL: server.url, MEDIA_API_KEY: base.key },
      stdout: "pipe",
      stderr: "pipe",
    });
    const bytes = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
    expect(await proc.exited).toBe(0);
    expect(sha256(bytes)).toBe(sha256(readFileSync(png)));
    // an explicit --content-type wins
    const [typed] = await cliJsonHere(["upload", png, "--bucket", bucket.id, "--key", "typed.bin", "--content-type", "application/x-test"], base);
    expect(typed.contentType).toBe("application/x-test");
  });

  test("an interrupted multipart upload resumes: the second run uploads only the missing parts", async () => {
    const src = file("long.bin", 22 * MiB); // 5 parts of 5 MiB
    const home = tempConfigHome();
    const args = ["upload", src.path, "--bucket", bucket.id, "--key", "resume/long.bin", ...multipart, "--concurrency", "1"];
    // A real process: its exit status is what a script sees.
    const first = await runCli(args, { ...base, configHome: home, extra: { MEDIA_CLI_TEST_STOP_AFTER_PARTS: "2" } });
    expect(first.code).toBe(130);
    expect(first.stderr).toContain("run the same command again to resume");
    const stateFiles = readdirSync(join(home, "media", "uploads"));
    expect(stateFiles).toHaveLength(1);
    const state = JSON.parse(readFileSync(join(home, "media", "uploads", stateFiles[0]!), "utf8"));
    expect(Object.keys(state.parts)).toEqual(["1", "2"]);
    // nothing is confirmed yet
    expect((await org.admin.get(`/api/media?bucketId=${bucket.id}&search=long.bin`)).body.total).toBe(0);

    const second = await runCliHere([...args, "--json"], { ...base, configHome: home });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain("resuming resume/long.bin: 2 of 5 parts already uploaded");
    const [result] = JSON.parse(second.stdout);
    expect(result).toMatchObject({ parts: 5, partsReused: 2, partsUploaded: 3, size: 22 * MiB });
    expect(readdirSync(join(home, "media", "uploads"))).toHaveLength(0);
    const out = join(dir, "long.downloaded");
    await cliJsonHere(["download", result.id, "-o", out], base);
    expect(sha256(readFileSync(out))).toBe(src.hash);
  });

  test("a saved upload the service no longer knows is started over", async () => {
    const src = file("stale.bin", 11 * MiB);
    const home = tempConfigHome();
    const args = ["upload", src.path, "--bucket", bucket.id, ...multipart, "--concurrency", "1"];
    expect((await runCliHere(args, { ...base, configHome: home, extra: { MEDIA_CLI_TEST_STOP_AFTER_PARTS: "1" } })).code).toBe(130);
    const [name] = readdirSync(join(home, "media", "uploads"));
    const state = JSON.parse(readFileSync(join(home, "media", "uploads", name!), "utf8"));
    const aborted = await org.admin.post("/api/presign/abort-multipart", { bucketId: bucket.id, key: "stale.bin", uploadId: state.uploadId });
    expect(aborted.status).toBe(200);
    const second = await runCliHere([...args, "--json"], { ...base, configHome: home });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain("cannot be continued");
    const [result] = JSON.parse(second.stdout);
    expect(result).toMatchObject({ parts: 3, partsReused: 0, partsUploaded: 3, size: 11 * MiB });
  });

  test("a failed part is retried", async () => {
    const src = file("flaky.bin", 11 * MiB);
    const r = await runCliHere(["upload", src.path, "--bucket", bucket.id, ...multipart, "--json"], { ...base, extra: { MEDIA_CLI_TEST_FAIL_PARTS: "2" } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/part 2 of flaky.bin failed \(injected failure.*\); attempt 2 of 5/);
    expect(JSON.parse(r.stdout)[0]).toMatchObject({ parts: 3, partsUploaded: 3 });
  });

  test("directories upload recursively with keys relative to the directory, under --prefix", async () => {
    const root = join(dir, "shoot");
    mkdirSync(join(root, "day1", "raw"), { recursive: true });
    writeFileSync(join(root, "cover.jpg"), Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(500)]));
    writeFileSync(join(root, "day1", "notes.txt"), "sunny");
    writeFileSync(join(root, "day1", "raw", "take.bin"), randomBytes(6 * MiB));
    const results = await cliJsonHere(["upload", root, "--bucket", bucket.id, "--prefix", "2026/shoot", ...multipart], base);
    const byKey = Object.fromEntries(results.map((r: { key: string }) => [r.key, r]));
    expect(Object.keys(byKey).sort()).toEqual(["2026/shoot/cover.jpg", "2026/shoot/day1/notes.txt", "2026/shoot/day1/raw/take.bin"]);
    expect(byKey["2026/shoot/cover.jpg"]).toMatchObject({ contentType: "image/jpeg", multipart: false });
    expect(byKey["2026/shoot/day1/notes.txt"]).toMatchObject({ contentType: "text/plain", size: 5 });
    expect(byKey["2026/shoot/day1/raw/take.bin"]).toMatchObject({ multipart: true, parts: 2 });
    const listed = await cliJsonHere(["media", "list", "--bucket-id", bucket.id, "--search", "2026/shoot"], base);
    expect(listed.total).toBe(3);
  });

  test("usage errors: --key with several files, a part size under 5 MiB, a missing file", async () => {
    const a = file("a.bin", 10);
    const b = file("b.bin", 10);
    const several = await runCliHere(["upload", a.path, b.path, "--bucket", bucket.id, "--key", "x"], base);
    expect(several.code).toBe(2);
    expect(several.stderr).toContain("--key names one object");
    const small = await runCliHere(["upload", a.path, "--bucket", bucket.id, "--part-size", "1MiB"], base);
    expect(small.code).toBe(2);
    expect(small.stderr).toContain("--part-size must be between 5MiB and 5GiB");
    const missing = await runCliHere(["upload", join(dir, "nope"), "--bucket", bucket.id], base);
    expect(missing.code).toBe(2);
    const noBucket = await runCliHere(["upload", a.path], base);
    expect(noBucket.code).toBe(2);
    expect(noBucket.stderr).toContain("missing --bucket");
    const unknownBucket = await runCliHere(["upload", a.path, "--bucket", "no-such-bucket"], base);
    expect(unknownBucket.code).toBe(4);
  });
});
