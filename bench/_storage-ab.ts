/**
 * `npx bun bench/_storage-ab.ts` (after `npm run bench -- thumbs` made the photos): the CPU the
 * worker's two storage requests cost per thumbnail, the embedded node of this process reached
 * in-process against over HTTP, alternating in one process (rounds of 20; the first round is
 * warm-up): a GET of a 1.43 MB photo into memory with its SHA-256 (readSmall, as the worker
 * reads it), a PUT of 15 KB (a thumbnail), and the SHA-256 alone. Numbers in
 * bench/notes/2026-11-29-thumbnails.md.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalS3 } from "../storage/local-s3/index.ts";
import { S3Storage } from "../storage/s3.ts";
import { readSmall } from "../worker/derivatives/source.ts";
import { cpuNow } from "./_cpu.ts";

const dir = mkdtempSync(join(tmpdir(), "ab-"));
const creds = { accessKeyId: "ABKEY", secretAccessKey: "absecret" };
const node = await startLocalS3({ dir, credentials: [creds], region: "us-east-1" });
const mk = (inProcess: boolean) => new S3Storage({ endpoint: node.url, publicEndpoint: null, region: "us-east-1", bucket: "bench", forcePathStyle: true, inProcess, ...creds });
const direct = mk(true);
const http = mk(false);
await direct.ensureBucket();
const photo = readFileSync(join(import.meta.dir, ".work/photo-0.jpg"));
const thumb = photo.subarray(0, 15_000);
await direct.put("p.jpg", photo, { contentType: "image/jpeg" });
const totals: Record<string, number> = {};
const hashOnly = async () => { new Bun.CryptoHasher("sha256").update(photo).digest("hex"); };
for (let round = 0; round < 6; round++) {
  for (const [name, s] of [["direct", direct], ["http", http]] as const) {
    for (const [op, fn] of [["get", (i: number) => readSmall(s, "p.jpg", { etag: null, maxBytes: 1e9 })], ["put", (i: number) => s.put(`t/${i}.webp`, thumb, { contentType: "image/webp" })], ["sha", hashOnly]] as const) {
      const start = cpuNow();
      for (let i = 0; i < 20; i++) await fn(i);
      const ms = (cpuNow() - start) / 20;
      if (round > 0) totals[`${name} ${op}`] = (totals[`${name} ${op}`] ?? 0) + ms / 5;
    }
  }
}
console.log(Object.entries(totals).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", "));
direct.client.destroy();
http.client.destroy();
await node.stop();
rmSync(dir, { recursive: true, force: true });
