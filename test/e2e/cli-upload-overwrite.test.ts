import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliJsonHere, removeTempConfigHomes, runCliHere, tempConfigHome } from "../support/cli.ts";
import { withServerAndOrg } from "../support/fixtures.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

setDefaultTimeout(120_000);

const MiB = 1024 * 1024;
let server: TestServer;
let org: TestOrg;
let bucket: { id: string; name: string };
let base: { url: string; key: string };
const dir = mkdtempSync(join(tmpdir(), "media-cli-overwrite-"));

withServerAndOrg({
  ready: async (made) => {
    ({ server, org } = made);
    base = { url: server.url, key: org.adminKey.secret };
    bucket = (await org.admin.post("/api/buckets", { name: "cli-overwrite" })).body;
  },
  cleanup: () => {
    rmSync(dir, { recursive: true, force: true });
    removeTempConfigHomes();
  },
});

function file(name: string, size: number): string {
  const path = join(dir, name);
  writeFileSync(path, randomBytes(size));
  return path;
}

const multipart = ["--threshold", "5MiB", "--part-size", "5MiB"];
const objectAt = async (key: string) => (await org.admin.get(`/api/media?bucketId=${bucket.id}&search=${encodeURIComponent(key)}`)).body.data.find((m: { key: string }) => m.key === key);

describe("media upload never replaces an object silently", () => {
  test("a file onto a taken key is refused (exit 1, naming --force) and the object is unchanged; --force replaces it", async () => {
    const [big] = await cliJsonHere(["upload", file("big.bin", 30_000), "--bucket", bucket.id, "--key", "big.bin"], base);
    const other = file("other.bin", 1000);
    const refused = await runCliHere(["upload", other, "--bucket", bucket.id, "--key", "big.bin"], base);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("big.bin already exists");
    expect(refused.stderr).toContain("--force");
    expect(await objectAt("big.bin")).toMatchObject({ id: big.id, size: 30_000, etag: (await org.admin.get(`/api/media/${big.id}`)).body.etag });

    const [replaced] = await cliJsonHere(["upload", other, "--bucket", bucket.id, "--key", "big.bin", "--force"], base);
    expect(replaced).toMatchObject({ id: big.id, size: 1000 });
  });

  test("a multipart upload onto a taken key is refused before any part is sent", async () => {
    await upload(org.admin, bucket.id, "taken.bin", "small");
    const r = await runCliHere(["upload", file("taken-big.bin", 6 * MiB), "--bucket", bucket.id, "--key", "taken.bin", ...multipart], base);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--force");
    expect((await objectAt("taken.bin")).size).toBe(5);
    // Nothing was reserved for it: the organization's reservations are back to none.
    expect((await org.admin.get("/api/usage")).body.reservedStorage ?? 0).toBe(0);
  });

  test("a key taken while a multipart upload ran is refused when the command runs again; --force then replaces it", async () => {
    const src = file("race.bin", 11 * MiB);
    const home = tempConfigHome();
    const args = ["upload", src, "--bucket", bucket.id, "--key", "race.bin", ...multipart, "--concurrency", "1"];
    expect((await runCliHere(args, { ...base, configHome: home, extra: { MEDIA_CLI_TEST_STOP_AFTER_PARTS: "2" } })).code).toBe(130);
    // Another writer stores the key meanwhile (its confirm closes the interrupted upload).
    const theirs = await upload(org.admin, bucket.id, "race.bin", "theirs");

    const refused = await runCliHere(args, { ...base, configHome: home });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`race.bin already exists in the bucket (object ${theirs.id}): use --force to replace it`);
    expect(await objectAt("race.bin")).toMatchObject({ id: theirs.id, size: 6 });

    const forced = await runCliHere([...args, "--force", "--json"], { ...base, configHome: home });
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout)[0]).toMatchObject({ id: theirs.id, size: 11 * MiB, parts: 3 });
    expect(readdirSync(join(home, "media", "uploads"))).toHaveLength(0);
  });

  test("the API's write condition: a URL presigned with overwrite false fails at the PUT when another writer stored the key first", async () => {
    const presigned = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "contested.bin", overwrite: false });
    expect(presigned.status).toBe(200);
    expect(presigned.body.headers["If-None-Match"] ?? presigned.body.headers["if-none-match"]).toBe("*");
    const theirs = await upload(org.admin, bucket.id, "contested.bin", "first writer");
    const put = await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body: "second writer" });
    expect(put.status).toBe(412);
    expect(await objectAt("contested.bin")).toMatchObject({ id: theirs.id, size: 12 });
    const again = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "contested.bin", overwrite: false });
    expect(again.status).toBe(409);
    expect(again.body.error.details).toEqual({ objectId: theirs.id });
    // A deleted object's key is free again, its bytes in the trash notwithstanding.
    expect((await org.admin.delete(`/api/media/${theirs.id}`)).status).toBe(200);
    expect((await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "contested.bin", overwrite: false })).status).toBe(200);
  });
});
