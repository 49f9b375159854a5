import { sql } from "drizzle-orm";
import sharp from "sharp";
import { newOrg, startServer } from "../support/server.ts";
import type { CheckResult } from "./s3-checks.ts";

/**
 * The service itself on a given store (S3_ENDPOINT): what a client does through REST, from a
 * tagged upload and its thumbnail to a multipart upload, downloads, deletion and reconcile.
 */
export async function serviceFlow(store: { endpoint: string; accessKeyId: string; secretAccessKey: string }): Promise<CheckResult[]> {
  const server = await startServer({
    embedded: true,
    env: { S3_ENDPOINT: store.endpoint, S3_ACCESS_KEY_ID: store.accessKeyId, S3_SECRET_ACCESS_KEY: store.secretAccessKey, S3_BUCKET: `media-compat-${Date.now()}` },
  });
  const results: CheckResult[] = [];
  const step = async (name: string, run: () => Promise<{ ok: boolean; observed: string }>) => {
    try {
      results.push({ name, ...(await run()) });
    } catch (err) {
      results.push({ name, ok: false, observed: `threw ${(err as Error).message}` });
    }
  };
  try {
    const org = await newOrg(server);
    const api = org.admin;
    const bucket = (await api.post("/api/buckets", { name: "compat" })).body;
    const jpeg = await sharp({ create: { width: 640, height: 480, channels: 3, background: "#3a7" } }).jpeg().toBuffer();
    let objectId = "";
    await step("service: presign with tags, PUT, confirm", async () => {
      const up = await api.post("/api/presign/upload", { bucketId: bucket.id, key: "beach.jpg", size: jpeg.byteLength, tags: ["summer", "beach day"] });
      const put = await fetch(up.body.url, { method: "PUT", headers: up.body.headers, body: new Uint8Array(jpeg) });
      const confirmed = await api.post("/api/presign/confirm", { bucketId: bucket.id, key: "beach.jpg" });
      objectId = confirmed.body.id;
      const tags = (confirmed.body.tags ?? []).map((t: { name: string }) => t.name).sort();
      return { ok: put.status === 200 && confirmed.status === 200 && confirmed.body.size === jpeg.byteLength && tags.join() === "beach day,summer", observed: `PUT ${put.status}, confirm ${confirmed.status}, ${confirmed.body.size} bytes, tags ${tags}` };
    });
    await step("service: an upload URL works once; a replacement (If-Match) and an unsized upload over the quota", async () => {
      const up = await api.post("/api/presign/upload", { bucketId: bucket.id, key: "once.bin" });
      const first = await fetch(up.body.url, { method: "PUT", headers: up.body.headers, body: new Uint8Array(69) });
      const confirmed = await api.post("/api/presign/confirm", { bucketId: bucket.id, key: "once.bin" });
      const again = await fetch(up.body.url, { method: "PUT", headers: up.body.headers, body: new Uint8Array(3000) });
      const re = await api.post("/api/presign/upload", { bucketId: bucket.id, key: "once.bin", size: 70 });
      const replaced = await fetch(re.body.url, { method: "PUT", headers: re.body.headers, body: new Uint8Array(70) });
      const reconfirmed = await api.post("/api/presign/confirm", { bucketId: bucket.id, key: "once.bin" });
      const usage = (await api.get("/api/usage")).body;
      await server.services.deps.db.execute(sql`update org_usage set allocated_storage = ${usage.usedStorage + 10} where org_id = ${org.orgId}`);
      const big = await api.post("/api/presign/upload", { bucketId: bucket.id, key: "big.bin" });
      const bigPut = await fetch(big.body.url, { method: "PUT", headers: big.body.headers, body: new Uint8Array(5000) });
      const refused = await api.post("/api/presign/confirm", { bucketId: bucket.id, key: "big.bin" });
      const gone = await server.services.deps.storage.head(`${bucket.id}/big.bin`);
      await server.services.deps.db.execute(sql`update org_usage set allocated_storage = ${usage.allocatedStorage} where org_id = ${org.orgId}`);
      const ok = first.status === 200 && confirmed.status === 200 && again.status === 412 && replaced.status === 200 && reconfirmed.body.size === 70 && bigPut.status === 200 && refused.status === 403 && gone === null;
      return { ok, observed: `PUT ${first.status}, confirm ${confirmed.status}, same URL again ${again.status}; replacement (${re.body.headers["If-Match"] ? "If-Match" : "no condition"}) ${replaced.status}, ${reconfirmed.body.size} bytes; unsized 5000 bytes over the quota: confirm ${refused.status}, bytes ${gone === null ? "deleted" : "kept"}` };
    });
    await step("service: the worker reads the object from storage and writes its thumbnail", async () => {
      let state = "";
      for (let i = 0; i < 60 && state !== "ready" && state !== "failed"; i++) {
        state = (await api.get(`/api/media/${objectId}`)).body.thumbnail?.state ?? "none";
        if (state !== "ready") await Bun.sleep(500);
      }
      const thumb = await fetch(`${server.url}/api/media/${objectId}/thumbnail`, { headers: { authorization: `Bearer ${org.adminKey.secret}` } });
      return { ok: state === "ready" && thumb.status === 200, observed: `thumbnail ${state}; GET ${thumb.status} ${thumb.headers.get("content-type")}` };
    });
    await step("service: download URL, ranged, and stream's 302", async () => {
      const dl = await api.post("/api/presign/download", { objectId });
      const ranged = await fetch(dl.body.url, { headers: { Range: "bytes=0-1" } });
      const head = new Uint8Array(await ranged.arrayBuffer());
      const stream = await fetch(`${server.url}/api/media/${objectId}/stream`, { headers: { authorization: `Bearer ${org.adminKey.secret}` }, redirect: "manual" });
      const followed = await fetch(stream.headers.get("location")!);
      const whole = (await followed.arrayBuffer()).byteLength;
      return { ok: ranged.status === 206 && head[0] === 0xff && head[1] === 0xd8 && stream.status === 302 && whole === jpeg.byteLength, observed: `range ${ranged.status}; stream ${stream.status} → ${followed.status}, ${whole} bytes` };
    });
    await step("service: multipart through REST, completed from storage's part list", async () => {
      const key = "big.bin";
      const part = new Uint8Array(5 * 1024 * 1024 + 17).fill(7);
      const created = await api.post("/api/presign/create-multipart", { bucketId: bucket.id, key, size: part.byteLength * 2 });
      const { uploadId } = created.body;
      for (const partNumber of [1, 2]) {
        const signed = await api.post("/api/presign/upload-part", { bucketId: bucket.id, key, uploadId, partNumber });
        const put = await fetch(signed.body.url, { method: "PUT", headers: signed.body.headers, body: part });
        if (!put.ok) return { ok: false, observed: `part ${partNumber}: PUT ${put.status} ${await put.text()}` };
      }
      const completed = await api.post("/api/presign/complete-upload", { bucketId: bucket.id, key, uploadId });
      const confirmed = await api.post("/api/presign/confirm", { bucketId: bucket.id, key });
      return { ok: completed.status === 200 && confirmed.body.size === part.byteLength * 2, observed: `complete ${completed.status}, confirm ${confirmed.status}, ${confirmed.body.size} bytes` };
    });
    await step("service: abort a multipart upload", async () => {
      const created = await api.post("/api/presign/create-multipart", { bucketId: bucket.id, key: "dropped.bin", size: 10 });
      const aborted = await api.post("/api/presign/abort-multipart", { bucketId: bucket.id, key: "dropped.bin", uploadId: created.body.uploadId });
      return { ok: aborted.status === 200, observed: `abort ${aborted.status}` };
    });
    await step("service: delete, then reconcile finds storage and catalogue agree", async () => {
      const deleted = await api.delete(`/api/media/${objectId}`);
      const report = await api.post("/api/reconcile", { fix: false });
      const r = report.body;
      const clean = r.rowsWithoutBytes?.count === 0 && r.derivativesWithoutSource?.count === 0 && r.usage?.consistent === true;
      return { ok: deleted.status === 200 && report.status === 200 && clean, observed: `delete ${deleted.status}; reconcile ${report.status}: rows without bytes ${r.rowsWithoutBytes?.count}, bytes without row ${r.bytesWithoutRow?.count}, usage consistent ${r.usage?.consistent}` };
    });
  } finally {
    await server.stop();
  }
  return results;
}
