/**
 * `npx bun bench/stages.ts [embedded|services]`: where the worker path's CPU goes, one stage
 * at a time, for one 12 MP JPEG thumbnail (the profile in bench/notes/2026-11-24-media-processing.md).
 * Stages run one after another, so each one's CPU time (this process: user + system) is its own. The
 * services mode uses a fresh PostgreSQL database, dropped afterwards. With S3_* set, storage
 * is that store instead of the embedded node.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import postgres from "postgres";
import { loadConfig } from "../app/config.ts";
import { createLogger } from "../app/log.ts";
import { createServices } from "../app/services.ts";
import { orgUsage } from "../db/schema/index.ts";
import { createBucket } from "../domain/buckets/buckets.ts";
import type { Caller } from "../domain/access/caller.ts";
import { beginDerivativeRun, derivativeKey, recordRendered, THUMBNAIL_EDGE } from "../domain/derivatives/derivatives.ts";
import { createOrganization } from "../domain/access/organizations.ts";
import { objectPath } from "../domain/media/storage-keys.ts";
import { confirmUpload } from "../domain/media/uploads.ts";
import { describeImage } from "../worker/derivatives/image.ts";
import { placeholderOf } from "../worker/derivatives/placeholder.ts";
import { renderThumbnail } from "../worker/derivatives/render.ts";
import { readSmall } from "../worker/derivatives/source.ts";

const mode = process.argv[2] ?? "embedded";
const N = 40;
const photoPath = join(import.meta.dir, ".work/photo-0.jpg");
const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

const dataDir = mkdtempSync(join(tmpdir(), "bench-stages-"));
const env: Record<string, string> = { DATA_DIR: dataDir, STORAGE_PORT: "0", LOG_LEVEL: "warn" };
const dbName = `media_stages_${Date.now()}`;
const admin = mode === "services" ? postgres(PG_URL, { max: 1, onnotice: () => {} }) : null;
if (admin) {
  await admin.unsafe(`create database ${dbName}`);
  const url = new URL(PG_URL);
  url.pathname = `/${dbName}`;
  env.DATABASE_URL = url.toString();
}

// No processor runs: the stages are driven by hand below.
const s3 = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("S3_")));
const services = await createServices(loadConfig({ ...s3, ...env }), { log: createLogger("warn"), processors: () => ({ "derivatives.generate": { run: async () => {} } }) });
try {
  const { deps } = services;
  const org = await deps.db.transaction((tx) => createOrganization(deps, tx, { name: "stages" }));
  await deps.db.update(orgUsage).set({ allocatedStorage: 1024 ** 4 }).where(eq(orgUsage.orgId, org.id));
  const caller: Caller = { orgId: org.id, userId: crypto.randomUUID(), apiKeyId: null, scopes: new Set(["admin"]), bucketId: null, principal: "stages" };
  const bucket = await createBucket(deps, caller, { name: "stages" });
  const photo = readFileSync(photoPath);
  const cpu: Record<string, number> = {};
  const now = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };
  const stage = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const start = now();
    const out = await fn();
    cpu[name] = (cpu[name] ?? 0) + now() - start;
    return out;
  };
  const limits = { maxPixels: 200_000_000 };
  for (let i = 0; i < N + 3; i++) {
    if (i === 3) for (const k of Object.keys(cpu)) delete cpu[k]; // warm-up done
    const key = `s/${i}.jpg`;
    await deps.storage.put(objectPath(bucket.id, key), photo, { contentType: "image/jpeg" });
    const view = await confirmUpload(deps, caller, { bucketId: bucket.id, key });
    const object = (await stage("job start (read the object)", () => beginDerivativeRun(deps, view.id)))!;
    const { bytes, sha256 } = await stage("storage GET (into memory, hashed)", () => readSmall(deps.storage, objectPath(bucket.id, key), { etag: object.etag, maxBytes: 1e9 }));
    const [info, thumb] = await stage("render (metadata + thumbnail)", () => Promise.all([describeImage(bytes), renderThumbnail(bytes, THUMBNAIL_EDGE, limits)]));
    const placeholder = await stage("placeholder (ThumbHash + colour)", () => placeholderOf(thumb.bytes));
    const variant = { variant: "thumbnail", bytes: thumb.bytes, contentType: thumb.contentType, width: thumb.width, height: thumb.height, etag: String(i).padStart(32, "0") };
    await stage("storage PUT (thumbnail)", () => deps.storage.put(derivativeKey({ ...variant, bucketId: bucket.id, objectId: object.id }), thumb.bytes, { contentType: "image/webp" }));
    await stage("record (one statement)", () => recordRendered(deps, object, [variant], { ...info, sha256, placeholder }));
    if (mode === "embedded") await stage("outbox settle (in-process queue)", () => services.outbox.settled(crypto.randomUUID(), null));
  }
  const bare = await (async () => {
    const start = now();
    for (let i = 0; i < N; i++) await Promise.all([describeImage(photo), renderThumbnail(photo, THUMBNAIL_EDGE, limits)]);
    return (now() - start) / N;
  })();
  const total = Object.values(cpu).reduce((a, b) => a + b, 0) / N;
  process.stdout.write(`\n${mode}: CPU ms per thumbnail, this process\n`);
  for (const [name, ms] of Object.entries(cpu)) process.stdout.write(`  ${name.padEnd(34)} ${(ms / N).toFixed(1)}\n`);
  process.stdout.write(`  ${"total".padEnd(34)} ${total.toFixed(1)}\n  ${"bare sharp loop (same render)".padEnd(34)} ${bare.toFixed(1)}\n`);
} finally {
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
  if (admin) {
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}
