/**
 * `npx bun bench/stages.ts [embedded|services] [--http]`: where the worker path's CPU goes, one
 * stage at a time, for one 12 MP JPEG thumbnail (bench/notes/2026-11-29-thumbnails.md). Stages run
 * one after another, so each one's CPU time (this process and its picture host child: user +
 * system) is its own. The services mode uses a fresh PostgreSQL database, dropped afterwards.
 * Storage is the embedded node of this process, reached directly (in-process); --http sends the
 * GET and PUT over HTTP as to any other store. With S3_* set, storage is that store instead.
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
import { beginDerivativeRun, derivativeKey, recordRendered } from "../domain/derivatives/derivatives.ts";
import { createOrganization } from "../domain/access/organizations.ts";
import { objectPath } from "../domain/media/storage-keys.ts";
import { confirmUpload } from "../domain/media/uploads.ts";
import { renderBase, renderKind, thumbnailFacts } from "../worker/derivatives/generate.ts";
import { readSmall } from "../worker/derivatives/source.ts";
import { S3Storage, type S3StorageOptions } from "../storage/s3.ts";
import { cpuNow } from "./_cpu.ts";

const mode = process.argv.slice(2).find((a) => !a.startsWith("--")) ?? "embedded";
const overHttp = process.argv.includes("--http");
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
// S3_* picks another store; WORKER_NICE and WORKER_SCHED_IDLE where the render runs.
const s3 = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("S3_") || k === "WORKER_NICE" || k === "WORKER_SCHED_IDLE") as [string, string][]);
const services = await createServices(loadConfig({ ...s3, ...env }), { log: createLogger("warn"), processors: () => ({ "derivatives.generate": { run: async () => {} } }) });
try {
  const { deps } = services;
  const org = await deps.db.transaction((tx) => createOrganization(deps, tx, { name: "stages" }));
  await deps.db.update(orgUsage).set({ allocatedStorage: 1024 ** 4 }).where(eq(orgUsage.orgId, org.id));
  const caller: Caller = { orgId: org.id, userId: crypto.randomUUID(), apiKeyId: null, scopes: new Set(["admin"]), bucketId: null, principal: "stages" };
  const bucket = await createBucket(deps, caller, { name: "stages" });
  const photo = readFileSync(photoPath);
  // The same client over HTTP (the options are the service's own; only the in-process shortcut is off).
  const storage = overHttp ? new S3Storage({ ...(deps.storage as unknown as { opts: S3StorageOptions }).opts, inProcess: false }) : deps.storage;
  const w = deps.config.worker;
  const cpu: Record<string, number> = {};
  const stage = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const start = cpuNow();
    const out = await fn();
    cpu[name] = (cpu[name] ?? 0) + cpuNow() - start;
    return out;
  };
  const where = overHttp ? "over HTTP" : "in-process";
  for (let i = 0; i < N + 3; i++) {
    if (i === 3) for (const k of Object.keys(cpu)) delete cpu[k]; // warm-up done
    const key = `s/${i}.jpg`;
    await deps.storage.put(objectPath(bucket.id, key), photo, { contentType: "image/jpeg" });
    const view = await confirmUpload(deps, caller, { bucketId: bucket.id, key });
    const object = (await stage("job start (read the object)", () => beginDerivativeRun(deps, view.id)))!;
    const { bytes, sha256 } = await stage(`storage GET ${where} (+ SHA-256)`, () => readSmall(storage, objectPath(bucket.id, key), { etag: object.etag, maxBytes: 1e9 }));
    const rendered = await stage("render (metadata + thumbnail)", () => renderKind(w, "image", { ...renderBase(w, "image/jpeg"), file: "", bytes, dir: "" }));
    const thumb = rendered.thumbnail;
    const facts = await stage("placeholder + difference hash", () => thumbnailFacts("image", thumb.bytes));
    const variant = { variant: "thumbnail", bytes: thumb.bytes, contentType: thumb.contentType, width: thumb.width, height: thumb.height, etag: String(i).padStart(32, "0") };
    await stage(`storage PUT ${where} (thumbnail)`, () => storage.put(derivativeKey({ ...variant, bucketId: bucket.id, objectId: object.id }), thumb.bytes, { contentType: "image/webp" }));
    await stage("record (one statement)", () => recordRendered(deps, object, [variant], { ...rendered.info, sha256, ...facts }));
    if (mode === "embedded") await stage("outbox settle (in-process queue)", () => services.outbox.settled(crypto.randomUUID(), null));
  }
  // The bare loop: the same calls on the bytes in memory.
  const bare = await (async () => {
    const start = cpuNow();
    for (let i = 0; i < N; i++) {
      new Bun.CryptoHasher("sha256").update(photo).digest("hex");
      const rendered = await renderKind(w, "image", { ...renderBase(w, "image/jpeg"), file: "", bytes: photo, dir: "" });
      await thumbnailFacts("image", rendered.thumbnail.bytes);
    }
    return (cpuNow() - start) / N;
  })();
  const total = Object.values(cpu).reduce((a, b) => a + b, 0) / N;
  process.stdout.write(`\n${mode}, storage ${where}, WORKER_NICE=${w.nice}${w.nice > 0 && w.schedIdle ? " (idle class)" : ""}: CPU ms per thumbnail, this process and its picture host\n`);
  for (const [name, ms] of Object.entries(cpu)) process.stdout.write(`  ${name.padEnd(34)} ${(ms / N).toFixed(1)}\n`);
  process.stdout.write(`  ${"total".padEnd(34)} ${total.toFixed(1)}\n  ${"bare loop (SHA-256, render, facts)".padEnd(34)} ${bare.toFixed(1)}\n`);
} finally {
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
  if (admin) {
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}
