import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import { derivatives, jobOutbox } from "../../db/schema/index.ts";
import type { Deps } from "../../domain/core/deps.ts";
import { derivativeKey, recordRendered } from "../../domain/derivatives/derivatives.ts";
import { liveObject } from "../../domain/derivatives/derivatives.ts";
import type { LogFields } from "../../domain/ports/log.ts";
import type { BullQueue } from "../../worker/bullmq-queue.ts";
import { generateDerivatives } from "../../worker/derivatives/generate.ts";
import { CpuSlots } from "../../worker/cpu-slots.ts";
import { aroundGenerate } from "../support/around-generate.ts";
import { eventually } from "../support/eventually.ts";
import { dimensions, mp3, mp4, orientedJpeg, pdf, png, wav } from "../support/media-files.ts";
import { mcpClient } from "../support/fixtures.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";
import { startReceiver } from "../support/webhook-receiver.ts";
import { toolError } from "../support/mcp-results.ts";

let server: TestServer;
let org: TestOrg;
let other: TestOrg;
let bucket: { id: string };

/** While set, derivative jobs wait for it: lets a test look at the pending state. */
let gate: { promise: Promise<void>; open(): void } | null = null;
function closeGate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  gate = { promise, open: () => (open(), (gate = null)) };
  return gate;
}
const gated = aroundGenerate(async (_objectId, work) => {
  await gate?.promise;
  await work();
});

beforeAll(async () => {
  server = await startServer({ env: { WORKER_BACKOFF_MS: "50" }, processors: gated });
  org = await newOrg(server);
  other = await newOrg(server);
  bucket = (await org.admin.post("/api/buckets", { name: "pictures" })).body;
});
afterAll(async () => {
  gate?.open();
  await server.stop();
});

const db = () => server.services.deps.db;

async function whenSettled(id: string, timeoutMs = 20_000) {
  return eventually(
    async () => {
      const res = await org.admin.get(`/api/media/${id}`);
      return res.body.thumbnail && res.body.thumbnail.state !== "pending" ? res.body : undefined;
    },
    { timeoutMs, what: `the thumbnail of ${id}` },
  );
}

async function thumbnailOf(id: string, headers?: Record<string, string>) {
  const res = await fetch(`${server.url}/api/media/${id}/thumbnail`, { headers: { authorization: `Bearer ${org.adminKey.secret}`, ...headers } });
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

describe("thumbnails are made on confirm and served", () => {
  test("PNG: a WebP whose long edge is 320, dimensions in info and in the media view", async () => {
    const obj = await upload(org.admin, bucket.id, "a/wide.png", await png(800, 600), { contentType: "image/png" });
    const settled = await whenSettled(obj.id);
    expect(settled.thumbnail).toMatchObject({ state: "ready", width: 320, height: 240, contentType: "image/webp" });
    expect(settled.thumbnail.etag).toMatch(/^[0-9a-f]{32}$/);
    expect(settled.info).toMatchObject({ width: 800, height: 600, format: "png" });
    expect(settled.metadata).toEqual({});
    const { res, bytes } = await thumbnailOf(obj.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/webp");
    expect(res.headers.get("etag")).toBe(`"${settled.thumbnail.etag}"`);
    expect(Number(res.headers.get("content-length"))).toBe(bytes.byteLength);
    expect(await dimensions(bytes)).toEqual({ width: 320, height: 240, format: "webp" });
    // the list carries the same summary
    const list = await org.admin.get(`/api/media?bucketId=${bucket.id}&search=wide`);
    expect(list.body.data[0].thumbnail).toEqual(settled.thumbnail);
  });

  test("JPEG with EXIF orientation 6: the thumbnail is upright (portrait), basic EXIF lands in info", async () => {
    const obj = await upload(org.admin, bucket.id, "a/turned.jpg", await orientedJpeg(400, 200), { contentType: "image/jpeg" });
    const settled = await whenSettled(obj.id);
    expect(settled.thumbnail).toMatchObject({ state: "ready", width: 160, height: 320 });
    expect(settled.info).toMatchObject({ width: 200, height: 400, orientation: 6, exif: { make: "TestCam", model: "T-1000", iso: 200 } });
    expect(await dimensions((await thumbnailOf(obj.id)).bytes)).toMatchObject({ width: 160, height: 320 });
  });

  test("MP4: a poster frame, duration and dimensions", async () => {
    const obj = await upload(org.admin, bucket.id, "v/test.mp4", await mp4(2, "320x240"), { contentType: "video/mp4" });
    const settled = await whenSettled(obj.id);
    expect(settled.thumbnail).toMatchObject({ state: "ready", width: 320, height: 240 });
    expect(settled.info).toMatchObject({ width: 320, height: 240, videoCodec: "h264", posterAt: 0 });
    expect(settled.info.duration).toBeCloseTo(2, 1);
    expect(await dimensions((await thumbnailOf(obj.id)).bytes)).toMatchObject({ width: 320, height: 240, format: "webp" });
  });

  test("PDF: the first page and the page count", async () => {
    const obj = await upload(org.admin, bucket.id, "d/letter.pdf", pdf(3, 612, 792), { contentType: "application/pdf" });
    const settled = await whenSettled(obj.id);
    expect(settled.thumbnail).toMatchObject({ state: "ready", height: 320 });
    expect(settled.thumbnail.width).toBeGreaterThanOrEqual(246);
    expect(settled.thumbnail.width).toBeLessThanOrEqual(248);
    expect(settled.info).toMatchObject({ pages: 3, pageWidth: 612, pageHeight: 792 });
  });

  test("WAV and MP3: a waveform and the duration", async () => {
    for (const [key, bytes, type] of [["s/tone.wav", await wav(2), "audio/wav"], ["s/tone.mp3", await mp3(2), "audio/mpeg"]] as const) {
      const obj = await upload(org.admin, bucket.id, key, bytes, { contentType: type });
      const settled = await whenSettled(obj.id);
      expect(settled.thumbnail).toMatchObject({ state: "ready", width: 320, height: 80 });
      expect(settled.info.duration).toBeCloseTo(2, 0);
      expect(settled.info.audioCodec).toBeString();
    }
  });

  test("3d and other files: unsupported from the moment of confirm, 404 thumbnail_unavailable with the reason", async () => {
    const model = await upload(org.admin, bucket.id, "m/ship.glb", "glTF binary", { contentType: "model/gltf-binary" });
    expect(model.thumbnail).toMatchObject({ state: "unsupported", width: null, etag: null });
    const res = await org.admin.get(`/api/media/${model.id}/thumbnail`);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: "thumbnail_unavailable", details: { state: "unsupported" } });
    expect(res.body.error.message).toContain("3d");
    const blob = await upload(org.admin, bucket.id, "m/data.bin", "bytes", { contentType: "application/octet-stream" });
    expect((await whenSettled(blob.id)).thumbnail.state).toBe("unsupported");
    expect((await whenSettled(model.id)).thumbnail.state).toBe("unsupported");
  });

  test("a new 3d or other file is settled at confirm: derivative.failed is told, no job is queued; new bytes at its key still get the job", async () => {
    const rx = startReceiver();
    try {
      const endpoint = await org.admin.post("/api/webhooks", { url: rx.url, eventTypes: ["derivative.failed"] });
      expect(endpoint.status).toBe(201);
      rx.secret = endpoint.body.secret;
      const jobsFor = async (id: string) =>
        (await db().select({ id: jobOutbox.id }).from(jobOutbox).where(and(eq(jobOutbox.name, "derivatives.generate"), sql`${jobOutbox.payload}->>'objectId' = ${id}`))).length;
      const blob = await upload(org.admin, bucket.id, "n/notes.bin", "some bytes", { contentType: "application/octet-stream" });
      expect(blob.thumbnail).toMatchObject({ state: "unsupported" });
      expect(await jobsFor(blob.id)).toBe(0);
      const told = await eventually(async () => rx.ofType("derivative.failed").find((r) => r.payload.data.objectId === blob.id), { what: "derivative.failed" });
      expect(told.payload.data).toEqual({ objectId: blob.id, bucketId: bucket.id, state: "unsupported", reason: "No thumbnail is made for this type of file" });
      expect(told.verifyError).toBeNull();
      // New bytes at the same key: the job deletes what the earlier version had made.
      const again = await upload(org.admin, bucket.id, "n/notes.bin", "other bytes, longer", { contentType: "application/octet-stream" });
      expect(again.id).toBe(blob.id);
      expect(await jobsFor(blob.id)).toBe(1);
      expect((await org.admin.delete(`/api/webhooks/${endpoint.body.id}`)).status).toBe(200);
    } finally {
      rx.stop();
    }
  });
});

describe("HTTP caching", () => {
  test("ETag, Cache-Control and 304 on If-None-Match; ?v=<etag> may be cached for good", async () => {
    const obj = await upload(org.admin, bucket.id, "c/cache.png", await png(64, 48), { contentType: "image/png" });
    const { etag } = (await whenSettled(obj.id)).thumbnail;
    const plain = await thumbnailOf(obj.id);
    expect(plain.res.headers.get("cache-control")).toBe("private, no-cache");
    expect(await dimensions(plain.bytes)).toMatchObject({ width: 64, height: 48 }); // never enlarged
    const again = await thumbnailOf(obj.id, { "if-none-match": `"${etag}"` });
    expect(again.res.status).toBe(304);
    expect(again.bytes.byteLength).toBe(0);
    expect(again.res.headers.get("etag")).toBe(`"${etag}"`);
    expect((await thumbnailOf(obj.id, { "if-none-match": `W/"other", "${etag}"` })).res.status).toBe(304);
    expect((await thumbnailOf(obj.id, { "if-none-match": `"stale"` })).res.status).toBe(200);
    const versioned = await fetch(`${server.url}/api/media/${obj.id}/thumbnail?v=${etag}`, { headers: { authorization: `Bearer ${org.adminKey.secret}` } });
    expect(versioned.headers.get("cache-control")).toBe("private, max-age=31536000, immutable");
  });
});

describe("states", () => {
  test("right after confirm the thumbnail is pending: thumbnail_pending, then ready", async () => {
    const g = closeGate();
    try {
      const obj = await upload(org.admin, bucket.id, "p/later.png", await png(100, 100), { contentType: "image/png" });
      expect(obj.thumbnail).toEqual({ state: "pending", width: null, height: null, contentType: null, etag: null });
      const res = await org.admin.get(`/api/media/${obj.id}/thumbnail`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("thumbnail_pending");
      g.open();
      expect((await whenSettled(obj.id)).thumbnail.state).toBe("ready");
    } finally {
      g.open();
    }
  });

  test("overwriting an object: pending again, then a new thumbnail under a new etag; the old bytes are deleted", async () => {
    const first = await upload(org.admin, bucket.id, "o/photo.png", await png(200, 100), { contentType: "image/png" });
    const before = (await whenSettled(first.id)).thumbnail;
    const oldKey = derivativeKey({ bucketId: bucket.id, objectId: first.id, variant: "thumbnail", etag: before.etag, contentType: "image/webp" });
    expect(await server.services.deps.storage.head(oldKey)).not.toBeNull();
    const g = closeGate();
    let second: { id: string; thumbnail: unknown };
    try {
      second = await upload(org.admin, bucket.id, "o/photo.png", await png(400, 800), { contentType: "image/png" });
      expect(second.id).toBe(first.id);
      expect(second.thumbnail).toMatchObject({ state: "pending" });
    } finally {
      g.open();
    }
    const after = await whenSettled(first.id);
    expect(after.thumbnail).toMatchObject({ state: "ready", width: 160, height: 320 });
    expect(after.thumbnail.etag).not.toBe(before.etag);
    expect(after.info).toMatchObject({ width: 400, height: 800 });
    await eventually(async () => ((await server.services.deps.storage.head(oldKey)) === null ? true : undefined), { what: "the old thumbnail to be deleted" });
  });

  test("bad media is retried, then failed with its reason (truncated PNG, text sent as image/png)", async () => {
    const good = await png(300, 300);
    const truncated = await upload(org.admin, bucket.id, "bad/truncated.png", good.subarray(0, Math.floor(good.length / 2)), { contentType: "image/png" });
    const liar = await upload(org.admin, bucket.id, "bad/liar.png", "this is not a picture", { contentType: "image/png" });
    for (const obj of [truncated, liar]) {
      const settled = await whenSettled(obj.id);
      expect(settled.thumbnail.state).toBe("failed");
      const res = await org.admin.get(`/api/media/${obj.id}/thumbnail`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("thumbnail_unavailable");
      expect(res.body.error.message).toStartWith("The image could not be decoded");
      expect(res.body.error.details.state).toBe("failed");
      const [row] = await db().select().from(derivatives).where(eq(derivatives.objectId, obj.id));
      expect(row!.attempts).toBe(server.config.worker.attempts);
    }
    // the queue keeps the failed job with its error too
    const [job] = await db().select().from(jobOutbox).where(and(eq(jobOutbox.name, "derivatives.generate"), sql`${jobOutbox.payload}->>'objectId' = ${truncated.id}`));
    if (server.services.backends.queue === "bullmq") {
      const failed = await (server.services.queue as BullQueue).getJob(job!.id);
      expect(await failed!.getState()).toBe("failed");
      expect(failed!.failedReason).toStartWith("The image could not be decoded");
      expect(failed!.attemptsMade).toBe(server.config.worker.attempts);
    } else {
      expect(job!.doneAt).not.toBeNull();
      expect(job!.error).toStartWith("The image could not be decoded");
    }
  });
});

describe("access", () => {
  test("other organizations get 404; a key restricted to another bucket gets 403", async () => {
    const obj = await upload(org.admin, bucket.id, "x/private.png", await png(50, 50), { contentType: "image/png" });
    await whenSettled(obj.id);
    const res = await other.admin.get(`/api/media/${obj.id}/thumbnail`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    const elsewhere = (await org.admin.post("/api/buckets", { name: "elsewhere" })).body;
    const restricted = await org.keyClient(["read"], { bucketId: elsewhere.id });
    expect((await restricted.get(`/api/media/${obj.id}/thumbnail`)).status).toBe(403);
    expect((await org.admin.get(`/api/media/${crypto.randomUUID()}/thumbnail`)).status).toBe(404);
    expect((await server.api.get(`/api/media/${obj.id}/thumbnail`)).status).toBe(401);
  });
});

describe("MCP", () => {
  test("media_thumbnail returns the description and the image itself", async () => {
    const obj = await upload(org.admin, bucket.id, "mcp/pic.png", await png(640, 320), { contentType: "image/png" });
    await whenSettled(obj.id);
    const client = await mcpClient(server, org.adminKey.secret, "t");
    try {
      const result = await client.callTool({ name: "media_thumbnail", arguments: { id: obj.id } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ objectId: obj.id, width: 320, height: 160, contentType: "image/webp" });
      const image = (result.content as { type: string; data?: string; mimeType?: string }[]).find((c) => c.type === "image")!;
      expect(image.mimeType).toBe("image/webp");
      expect(await dimensions(Buffer.from(image.data!, "base64"))).toMatchObject({ width: 320, height: 160 });
      const model = await upload(org.admin, bucket.id, "mcp/ship.stl", "solid x", { contentType: "model/stl" });
      const refused = await client.callTool({ name: "media_thumbnail", arguments: { id: model.id } });
      expect(refused.isError).toBe(true);
      expect(toolError(refused.content).code).toBe("thumbnail_unavailable");
    } finally {
      await client.close();
    }
  });
});

describe("the processor", () => {
  test("is idempotent: running the job twice gives the same thumbnail at the same key", async () => {
    const obj = await upload(org.admin, bucket.id, "i/twice.png", await png(120, 90), { contentType: "image/png" });
    const first = (await whenSettled(obj.id)).thumbnail;
    const deps = server.services.deps;
    await generateDerivatives(deps, obj.id, { attempt: 1, attempts: 1 }, new CpuSlots(1));
    await generateDerivatives(deps, obj.id, { attempt: 1, attempts: 1 }, new CpuSlots(1));
    const rows = await db().select().from(derivatives).where(eq(derivatives.objectId, obj.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ state: "ready", etag: first.etag, width: 120, height: 90 });
    expect(rows[0]!.storageKey).toBe(derivativeKey({ bucketId: bucket.id, objectId: obj.id, variant: "thumbnail", etag: first.etag, contentType: "image/webp" }));
    expect(await deps.storage.head(rows[0]!.storageKey!)).not.toBeNull();
  });

  test("reads the embedded store's own file of the version: no bytes fetched, in the picture process and in the worker's own", async () => {
    const bytes = await png(200, 150);
    const obj = await upload(org.admin, bucket.id, "i/stored-file.png", bytes, { contentType: "image/png" });
    await whenSettled(obj.id);
    const base = server.services.deps;
    const file = await base.storage.localFile?.(`${bucket.id}/i/stored-file.png`);
    expect(file?.info.size).toBe(bytes.length);
    // A store whose GET fails: the job can only succeed by reading the file itself.
    const noGet = new Proxy(base.storage, {
      get: (target, prop) => (prop === "get" ? async () => { throw new Error("the object was fetched"); } : Reflect.get(target, prop)),
    });
    const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    for (const nice of [10, 0]) {
      const deps: Deps = { ...base, storage: noGet, config: { ...base.config, worker: { ...base.config.worker, nice } } };
      await db().update(derivatives).set({ state: "pending" }).where(eq(derivatives.objectId, obj.id));
      await generateDerivatives(deps, obj.id, { attempt: 1, attempts: 1 }, new CpuSlots(1));
      const settled = await whenSettled(obj.id);
      expect(settled.thumbnail).toMatchObject({ state: "ready", width: 200, height: 150 });
      expect(settled.info.sha256).toBe(sha256);
    }
  });

  test("a stored file replaced before it is read: the job fails as for a changed ETag, and the new version gets its own thumbnail", async () => {
    const obj = await upload(org.admin, bucket.id, "i/replaced-file.png", await png(80, 60), { contentType: "image/png" });
    await whenSettled(obj.id);
    const base = server.services.deps;
    const before = (await base.storage.localFile!(`${bucket.id}/i/replaced-file.png`))!;
    // The job has found the version's file; a new version is published before the decoding opens it.
    class ReplacedFirst extends CpuSlots {
      override run<T>(work: () => Promise<T>): Promise<T> {
        return super.run(async () => {
          await upload(org.admin, bucket.id, "i/replaced-file.png", await png(90, 60), { contentType: "image/png" });
          return work();
        });
      }
    }
    await db().update(derivatives).set({ state: "pending" }).where(eq(derivatives.objectId, obj.id));
    const failed = await generateDerivatives(base, obj.id, { attempt: 1, attempts: 3 }, new ReplacedFirst(1)).then(() => null, (err: Error) => err);
    expect(await Bun.file(before.path).exists()).toBe(false);
    expect(failed?.message).toBe("The stored file changed after the upload was confirmed; confirm it again");
    expect((await whenSettled(obj.id)).thumbnail).toMatchObject({ state: "ready", width: 90 });
  });

  test("takes a cpu slot for its decoding only: with one slot, a second job reads its object while the first decodes, then waits for the slot", async () => {
    const a = await upload(org.admin, bucket.id, "i/slot-a.png", await png(400, 300), { contentType: "image/png" });
    const b = await upload(org.admin, bucket.id, "i/slot-b.png", await png(300, 400), { contentType: "image/png" });
    await whenSettled(a.id);
    await whenSettled(b.id);
    class Watched extends CpuSlots {
      asked = 0;
      inside = 0;
      most = 0;
      override run<T>(work: () => Promise<T>): Promise<T> {
        const turn = ++this.asked;
        return super.run(async () => {
          this.most = Math.max(this.most, ++this.inside);
          try {
            // The first decode waits until the second job asks for the slot: it can only ask
            // once its object is read and downloaded, which must not need a slot.
            if (turn === 1) await eventually(async () => (this.asked === 2 ? true : undefined), { what: "the second job to ask for the slot" });
            return await work();
          } finally {
            this.inside--;
          }
        });
      }
    }
    const slots = new Watched(1);
    const deps = server.services.deps;
    await Promise.all([a, b].map((o) => generateDerivatives(deps, o.id, { attempt: 1, attempts: 1 }, slots)));
    expect(slots.asked).toBe(2);
    expect(slots.most).toBe(1);
    expect(slots.busy).toBe(0);
    const rows = await db().select().from(derivatives).where(and(eq(derivatives.variant, "thumbnail"), sql`${derivatives.objectId} in (${a.id}, ${b.id})`));
    expect(rows.map((r) => r.state)).toEqual(["ready", "ready"]);
  });

  test("a result for a version that was overwritten meanwhile is dropped, and its bytes deleted by the caller", async () => {
    const obj = await upload(org.admin, bucket.id, "i/race.png", await png(60, 60), { contentType: "image/png" });
    await whenSettled(obj.id);
    const deps = server.services.deps;
    const old = (await liveObject(deps, obj.id))!;
    await upload(org.admin, bucket.id, "i/race.png", await png(70, 70), { contentType: "image/png" });
    const stale = { variant: "thumbnail", bytes: new Uint8Array([1, 2, 3]), contentType: "image/webp", width: 1, height: 1, etag: "0".repeat(32) };
    const result = await recordRendered(deps, old, [stale], { width: 1 });
    expect(result.recorded).toBe(false);
    expect(result.unreferencedKeys).toEqual([derivativeKey({ ...stale, bucketId: bucket.id, objectId: obj.id })]);
    const settled = await whenSettled(obj.id);
    expect(settled.thumbnail).toMatchObject({ state: "ready", width: 70 });
    expect(settled.info.width).toBe(70);
  });

  test("a later run that cannot make a thumbnail (a worker with a lower size limit) keeps the one already made", async () => {
    const lines: { msg: string; fields?: LogFields }[] = [];
    const log = { debug() {}, info() {}, error: (msg: string) => lines.push({ msg }), warn: (msg: string, fields?: LogFields) => lines.push({ msg, fields }) };
    const base = server.services.deps;
    const deps: Deps = { ...base, log, config: { ...base.config, worker: { ...base.config.worker, maxInputBytes: 10 } } };
    const video = await upload(org.admin, bucket.id, "t/clip.mp4", await mp4(1), { contentType: "video/mp4" });
    const ready = async () => ((await org.admin.get(`/api/media/${video.id}`)).body.thumbnail.state === "ready" ? true : undefined);
    await eventually(ready, { what: "the video's thumbnail" });
    await generateDerivatives(deps, video.id, { attempt: 3, attempts: 3 }, new CpuSlots(1));
    expect(await ready()).toBe(true);
    expect(lines).toEqual([]);
  });

  test("a file over the worker's size limit is unsupported, with the reason", async () => {
    const base = server.services.deps;
    const deps: Deps = { ...base, config: { ...base.config, worker: { ...base.config.worker, maxInputBytes: 10 } } };
    const g = closeGate();
    try {
      const doc = await upload(org.admin, bucket.id, "t/doc.pdf", pdf(1), { contentType: "application/pdf" });
      await generateDerivatives(deps, doc.id, { attempt: 1, attempts: 3 }, new CpuSlots(1));
      const res = await org.admin.get(`/api/media/${doc.id}/thumbnail`);
      expect(res.body.error).toMatchObject({ code: "thumbnail_unavailable", details: { state: "unsupported" } });
      expect(res.body.error.message).toBe("Files larger than 10 bytes get no thumbnail");
    } finally {
      g.open();
    }
  });
});
