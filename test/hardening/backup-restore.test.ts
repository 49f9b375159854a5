import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { objectPath } from "../../domain/media/storage-keys.ts";
import { type LocalS3, startLocalS3 } from "../../storage/local-s3/index.ts";
import type { S3Storage } from "../../storage/s3.ts";
import { testEnv } from "../support/env.ts";
import { Api } from "../support/http.ts";
import { eventually } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { spawnScript } from "../support/processes.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { s3Client, syncBucket, wipeBucket } from "../support/storage-copy.ts";
import { bytesOf, sha256, upload } from "../support/upload.ts";

/**
 * docs/operations.md, tried on the real services: PostgreSQL dumped with pg_dump, then the
 * object store copied (in that order); afterwards one more upload is confirmed and one object
 * deleted; then the database is dropped and the store wiped. Restored with pg_restore and the
 * copy, the service serves what the backup held, and `npm run reconcile` says what the gap
 * between the two copies left: the upload confirmed after the dump is bytes without a row,
 * which confirming it again turns back into an object; after that reconcile finds nothing.
 */
const pgDump = Bun.which("pg_dump");
const pgRestore = Bun.which("pg_restore");
const why = testEnv.mode !== "services" ? "PostgreSQL is not configured for this run" : !pgDump || !pgRestore ? "pg_dump/pg_restore are not installed" : null;
const credentials = { accessKeyId: "BACKUPTESTKEY", secretAccessKey: "backup-test-secret-0123456789" };

async function run(cmd: string[]): Promise<void> {
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cmd[0]} exited ${code}: ${err}`);
}

describe.skipIf(why !== null)(`backup, disaster, restore, reconcile${why ? ` (skipped: ${why})` : ""}`, () => {
  const suffix = `${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
  const names = { live: `media_backup_${suffix}`, restored: `media_restored_${suffix}` };
  const urlOf = (db: string) => {
    const u = new URL(testEnv.databaseUrl!);
    u.pathname = `/${db}`;
    return u.toString();
  };
  let admin: ReturnType<typeof postgres>;
  let dir: string;
  let live: LocalS3;
  let copy: LocalS3;
  let liveStore: S3Storage;
  let copyStore: S3Storage;
  let server: TestServer | null = null;
  let org: TestOrg;
  let bucket: { id: string };
  const kept: Record<string, { id: string; sha: string }> = {};

  const serverOn = (db: string) =>
    startServer({
      embedded: true,
      env: { DATABASE_URL: urlOf(db), S3_ENDPOINT: live.url, S3_ACCESS_KEY_ID: credentials.accessKeyId, S3_SECRET_ACCESS_KEY: credentials.secretAccessKey },
    });

  beforeAll(async () => {
    admin = postgres(testEnv.databaseUrl!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${names.live}`);
    dir = mkdtempSync(join(tmpdir(), "media-backup-"));
    [live, copy] = await Promise.all([startLocalS3({ dir: join(dir, "live"), credentials: [credentials] }), startLocalS3({ dir: join(dir, "copy"), credentials: [credentials] })]);
    liveStore = s3Client(live.url, credentials);
    copyStore = s3Client(copy.url, credentials);
    await copyStore.ensureBucket();
    server = await serverOn(names.live);
    org = await newOrg(server, "Backed up");
    bucket = (await org.admin.post("/api/buckets", { name: "precious" })).body;
    for (const [key, bytes] of [
      ["a.txt", bytesOf(1000, 1)],
      ["b.txt", bytesOf(2000, 2)],
      ["picture.png", new Uint8Array(await png(300, 200))],
    ] as const) {
      const obj = await upload(org.admin, bucket.id, key, bytes, { contentType: key.endsWith(".png") ? "image/png" : "text/plain" });
      kept[key] = { id: obj.id, sha: sha256(bytes) };
    }
    await eventually(async () => ((await org.admin.get(`/api/media/${kept["picture.png"]!.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "the thumbnail" });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await Promise.all([live?.stop(), copy?.stop()]);
    for (const db of Object.values(names)) await admin?.unsafe(`drop database if exists ${db} with (force)`).catch(() => {});
    await admin?.end();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("restored from pg_dump and a later copy of storage, the service has what the backup had; reconcile names the gap", async () => {
    // The backup: database first, then storage. Work goes on in between.
    const dump = join(dir, "media.dump");
    await run([pgDump!, "--format=custom", `--file=${dump}`, urlOf(names.live)]);
    const late = await upload(org.admin, bucket.id, "after-the-dump.txt", bytesOf(500, 9), { contentType: "text/plain" });
    expect(await syncBucket(liveStore, copyStore)).toBeGreaterThan(3);
    // After the backup: a deletion, which the restore undoes.
    expect((await org.admin.delete(`/api/media/${kept["a.txt"]!.id}`)).status).toBe(200);

    // The disaster: both copies of the truth gone.
    await server!.stop();
    server = null;
    await admin.unsafe(`drop database ${names.live} with (force)`);
    await wipeBucket(liveStore);

    // The restore.
    await admin.unsafe(`create database ${names.restored}`);
    await run([pgRestore!, "--no-owner", `--dbname=${urlOf(names.restored)}`, dump]);
    await syncBucket(copyStore, liveStore);
    server = await serverOn(names.restored);
    const api = new Api(server.url, org.adminKey.secret);

    // What the backup held is served, bytes identical.
    for (const [key, { id, sha }] of Object.entries(kept)) {
      const res = await api.post("/api/presign/download", { objectId: id });
      expect(res.status).toBe(200);
      const got = await fetch(res.body.url);
      expect({ key, sha: sha256(await got.arrayBuffer()) }).toEqual({ key, sha });
    }
    expect((await api.get(`/api/media/${late.id}`)).status).toBe(404);
    expect((await api.get(`/api/media/${kept["picture.png"]!.id}/thumbnail`)).status).toBe(200);

    // Reconcile, as the operator runs it: the gap is the upload confirmed after the dump.
    const env = {
      DATABASE_URL: urlOf(names.restored),
      S3_ENDPOINT: live.url,
      S3_ACCESS_KEY_ID: credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      DATA_DIR: server.config.dataDir,
    };
    const first = spawnScript("app/reconcile.ts", { ...env });
    expect(await first.proc.exited).toBe(1);
    const lines = first.output().trim().split("\n").map((l) => JSON.parse(l));
    const report = lines.find((l) => l.organization?.orgId === org.orgId)!.organization;
    expect(report.bytesWithoutRow).toMatchObject({ count: 1, bytes: 500, samples: [{ path: objectPath(bucket.id, "after-the-dump.txt") }] });
    expect([report.rowsWithoutBytes.count, report.derivativesWithoutSource.count, report.usage.consistent]).toEqual([0, 0, true]);
    expect(lines.at(-1).summary).toEqual({ organizations: 1, fix: false, leftToLookAt: 1 });

    // Confirming those bytes again makes them an object again; then nothing is left.
    const reconfirmed = await api.post("/api/presign/confirm", { bucketId: bucket.id, key: "after-the-dump.txt" });
    expect(reconfirmed.body).toMatchObject({ key: "after-the-dump.txt", size: 500 });
    const second = spawnScript("app/reconcile.ts", { ...env });
    expect(await second.proc.exited).toBe(0);
    expect(second.output().trim().split("\n").map((l) => JSON.parse(l)).at(-1).summary.leftToLookAt).toBe(0);
  }, 120_000);
});
