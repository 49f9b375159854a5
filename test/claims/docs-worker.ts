import { expect } from "bun:test";
import { closeSync, ftruncateSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inArray, sql } from "drizzle-orm";
import { jobOutbox } from "../../db/schema/index.ts";
import { JOB_CLASS } from "../../domain/core/jobs.ts";
import { RECENT_RENDER_BYTES } from "../../domain/derivatives/render.ts";
import { EgressLedger } from "../../domain/usage/egress-ledger.ts";
import { Unsupported } from "../../worker/derivatives/errors.ts";
import { pdfRenderer } from "../../worker/derivatives/pdf.ts";
import { nicedHost } from "../../worker/derivatives/render-pool.ts";
import { POSTER_EDGE, videoPoster } from "../../worker/derivatives/video.ts";
import { FAIRNESS_TTL_MS } from "../../worker/fair-share.ts";
import { pruneOutbox } from "../../worker/outbox.ts";
import type { PageClaims } from "./claim.ts";
import { defaults, GiB, MiB, org, withServer } from "../support/claim-checks.ts";
import { mp4, png } from "../support/media-files.ts";
import { newBucket } from "../support/objects.ts";
import type { Api } from "../support/http.ts";
import type { TestServer } from "../support/server.ts";
import { eventually } from "../support/eventually.ts";
import { pictureWithThumbnail, upload } from "../support/upload.ts";

const DERIVATIVES = "test/integration/derivatives.test.ts";
const CLASSES = "test/integration/job-classes.test.ts";
const RENDER = "test/integration/render.test.ts";
const UNIT = "test/unit/render.test.ts";
const renderOf = (server: TestServer, secret: string, id: string, query: string) =>
  fetch(`${server.url}/api/media/${id}/render?${query}`, { headers: { authorization: `Bearer ${secret}` } });

/** A scratch directory for the checks that hand files to a renderer. */
async function inScratch<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "claims-worker-"));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits until the worker has made the object's thumbnail (renders are cut from the same source). */
const thumbnailReady = (api: Api, id: string) =>
  eventually(async () => ((await api.get(`/api/media/${id}`)).body.thumbnail?.state === "ready" ? true : undefined), { timeoutMs: 60_000, what: `the thumbnail of ${id}` });

const MEASURED_NEIGHBOURS = "measured by npm run bench -- neighbours (bench/notes/2026-11-27-neighbours-sittings.md); a measurement on one machine, not a bound the service holds";

export default {
  page: "docs/worker.md",
  claims: [
    {
      says: "BullMQ keeps failed jobs, with their error and stack, for 30 days (at most 10,000); completed jobs are kept a day (at most 1,000). The queues' keys are <REDIS_PREFIX>:jobs-cpu:* and <REDIS_PREFIX>:jobs-io:*, and the job id is the outbox row's id.",
      by: { file: "test/integration/bullmq-worker.test.ts", test: "failed jobs are kept 30 days (at most 10,000), completed ones a day (at most 1,000), under <prefix>:jobs-cpu and <prefix>:jobs-io by class" },
    },
    {
      says: "| cpu | derivatives.generate (thumbnails and facts), sets.generate (set renditions), media.text (text of PDFs and text files, OCR of images), media.pictures (picture hash and colour of objects stored before) | WORKER_CONCURRENCY (2) |",
      check: async () => {
        expect(JOB_CLASS).toEqual({
          "derivatives.generate": "cpu",
          "sets.generate": "cpu",
          "media.import": "io",
          "webhooks.deliver": "io",
          "media.purge": "io",
          "buckets.purge": "io",
          "search.sync": "io",
          "media.text": "cpu",
          "search.backfill": "io",
          "media.pictures": "cpu",
        });
        await defaults({ WORKER_CONCURRENCY: 2, WORKER_IO_CONCURRENCY: 16 })();
      },
    },
    {
      says: "| io | media.import, webhooks.deliver, media.purge, buckets.purge, search.sync, search.backfill | WORKER_IO_CONCURRENCY (16) |",
      check: defaults({ WORKER_IO_CONCURRENCY: 16 }),
    },
    {
      says: "So an organization whose imports trickle from a slow server, or whose webhook endpoints never answer, fills io slots at most, and every organization's thumbnails keep the cpu ones",
      by: { file: CLASSES, test: "slow network work does not hold another organization's thumbnails" },
    },
    {
      says: "With Redis each class is a BullMQ queue of its own, <REDIS_PREFIX>:jobs-cpu and <REDIS_PREFIX>:jobs-io, and every worker (npm run worker, or the server with WORKER_INLINE=true) runs both, each at its class's concurrency.",
      by: { file: CLASSES, test: "slow network work does not hold another organization's thumbnails" },
    },
    {
      says: "Releases before the classes had one queue, <REDIS_PREFIX>:jobs: workers of this release also run what is left there, at WORKER_CONCURRENCY, so nothing an instance of the previous release queues during a rolling upgrade is stranded",
      by: { file: "test/integration/bullmq-worker.test.ts", test: "a rolling upgrade strands nothing" },
    },
    { says: "| WORKER_IO_CONCURRENCY | 16 |", check: defaults({ WORKER_IO_CONCURRENCY: 16 }) },
    {
      says: "Each process holds twice WORKER_CONCURRENCY cpu jobs (cpuJobsInHand in domain/core/jobs.ts, on both queues) and decodes WORKER_CONCURRENCY of them at once (worker/cpu-slots.ts).",
      by: { file: "test/integration/inprocess-jobs.test.ts", test: "SIGTERM-style close finishes the jobs in hand and returns the unstarted ones" },
    },
    {
      says: "At most twice WORKER_CONCURRENCY sources wait in memory, each at most 32 MiB (larger files are streamed to a temporary file); three times while the queue of a release before the classes still holds jobs (its worker keeps WORKER_CONCURRENCY jobs in hand, and shares the decoding slots).",
      by: { file: "test/integration/derivatives.test.ts", test: "takes a cpu slot for its decoding only" },
    },
    {
      says: "a full allocation is refused before anything is rendered, and a rendition larger than the room left is refused when it is reserved, after one render, not one per attempt.",
      by: { file: "test/integration/quota-in-jobs.test.ts", test: "a set whose organization has no room left is refused before anything is rendered, in one run" },
    },
    { says: "a rendition larger than the room left is refused when it is reserved, after one render", by: { file: "test/integration/quota-in-jobs.test.ts", test: "a rendition larger than the room left is rendered once, refused, and not run again" } },
    {
      says: "(an answer without Content-Length too large for the room left is fetched once and fails as quota_exceeded)",
      by: { file: "test/integration/quota-in-jobs.test.ts", test: "an import without Content-Length that outgrows the allocation is fetched once and fails as quota_exceeded" },
    },
    { says: "and the rate floor frees a trickling import's slot after one window rather than the whole timeout", by: { file: CLASSES, test: "an import from a server that trickles fails as too slow after one window, fetched once, long before IMPORT_TIMEOUT_MS" } },
    {
      says: "when a slot frees, the next job comes from the organization with the fewest jobs in hand in that class, so one organization's backlog, however long, delays another organization's next job by about the length of one job",
      by: { file: CLASSES, test: "an organization's backlog of hanging deliveries delays another's delivery by about one job, not the backlog" },
    },
    {
      says: "A freed slot goes to the organization with the fewest jobs running, and among equals to the one served least recently; each organization's own jobs run in the order they were queued.",
      by: { file: "test/unit/memory-queue.test.ts", test: "one slot: organizations take turns, a newcomer before the organization that just had one" },
    },
    {
      says: "each job is queued with a priority equal to its organization's outstanding jobs in the class, itself included",
      by: { file: CLASSES, test: "a job is queued with its organization's outstanding count as priority, and counted out when it completes" },
    },
    {
      says: "every job still gets a priority between 1 and BullMQ's largest, 2,097,152, and runs.",
      by: { file: "test/unit/fair-share.test.ts", test: "a job's BullMQ priority is its organization's outstanding jobs in the class (itself included), within 1..2,097,152" },
    },
    {
      says: "Each key expires an hour after it was last used, so a drift is forgotten once the organization has been quiet in the class that long.",
      by: { file: CLASSES, test: "counted in at add and out when a job ends; never below zero; they expire when unused" },
      check: async () => expect(FAIRNESS_TTL_MS).toBe(60 * 60 * 1000),
    },
    {
      says: "Finished outbox rows are deleted after 7 days, failed ones after 30.",
      check: async (server) => {
        const { db } = server.services.deps;
        const row = (daysAgo: number, error: string | null) => ({
          name: "search.sync" as const,
          payload: { orgId: crypto.randomUUID(), objectIds: [] },
          dispatchedAt: new Date(),
          doneAt: sql`now() - ${daysAgo}::int * interval '1 day'`,
          error,
        });
        const rows = await db
          .insert(jobOutbox)
          .values([row(6, null), row(8, null), row(29, "failed for good"), row(31, "failed for good")])
          .returning({ id: jobOutbox.id });
        await pruneOutbox(server.services.deps);
        const left = await db.select({ id: jobOutbox.id }).from(jobOutbox).where(inArray(jobOutbox.id, rows.map((r) => r.id)));
        expect(left.map((r) => rows.findIndex((x) => x.id === r.id)).sort()).toEqual([0, 2]);
      },
    },
    { says: "| pdf | pdf.js (pdfjs-dist) drawing on @napi-rs/canvas (Skia) | the first page, on white | pages, pageWidth, pageHeight (points, first page as displayed), title, author |", by: { file: UNIT, test: "the first page, its size in points, the page count, title and author" } },
    { says: "sha256: the SHA-256 of its bytes (hex), hashed while the worker reads them.", by: { file: RENDER, test: "every kind: the SHA-256 of its bytes, a ThumbHash and a dominant colour" } },
    { says: "Objects with the same bytes have the same hash: GET /api/media?duplicatesOf=<id> lists the others, GET /api/media?sha256=<hex> all of them.", by: { file: RENDER, test: "duplicates: objects with the same bytes, by hash or by one of them" } },
    {
      says: "(about 25 bytes, base64; decode it with the thumbhash package to paint a blurred picture)",
      check: async (server) => {
        const o = await org(server);
        const id = await pictureWithThumbnail(o.admin, `thumbhash-${crypto.randomUUID().slice(0, 8)}`);
        const { placeholder } = (await o.admin.get(`/api/media/${id}`)).body.info;
        const bytes = Buffer.from(placeholder.thumbhash, "base64");
        expect(bytes.toString("base64")).toBe(placeholder.thumbhash);
        expect(bytes.length).toBeGreaterThanOrEqual(20);
        expect(bytes.length).toBeLessThanOrEqual(30);
        expect(placeholder.color).toMatch(/^#[0-9a-f]{6}$/);
      },
    },
    { says: "Every thumbnail is a WebP whose long edge is at most 320 px (never enlarged), stripped of metadata", by: { file: UNIT, test: "long edge 320, aspect kept, never enlarged, WebP without metadata" } },
    { says: "scaled down to 320 x 80.", by: { file: UNIT, test: "an MP3 gets a 320 x 80 waveform and its facts, tags included" } },
    { says: "(JPEG) or first page (PNG) at up to 1280 px and keeps it beside the thumbnail as the source derivative", by: { file: RENDER, test: "video posters and PDF pages render too, from a picture made on the first render and kept" } },
    {
      says: "backend answers 400 for them, as its documents do not carry the facts yet).",
      check: async () => {
        // Nothing listens on port 9: the refusal comes before Meilisearch is asked anything.
        await withServer({ MEILISEARCH_URL: "http://127.0.0.1:9" }, async (meili) => {
          const o = await org(meili);
          for (const filter of ["minWidth=10", `sha256=${"0".repeat(64)}`, "takenAfter=2024-01-01", "minDuration=1"]) {
            const res = await o.admin.get(`/api/search?q=beach&${filter}`);
            expect([filter, res.status, res.body.error.code]).toEqual([filter, 400, "bad_request"]);
            expect(res.body.error.message).toContain("PostgreSQL search backend");
          }
        });
      },
    },
    { says: "With WORKER_NICE above 0 (default 10):", check: defaults({ WORKER_NICE: 10, WORKER_SCHED_IDLE: true }) },
    { says: "the default, in Linux's idle scheduling class: chrt --idle 0) on first use", by: { file: "test/unit/niced-host.test.ts", test: "with idle, the child runs in the idle scheduling class as well (WORKER_SCHED_IDLE)" } },
    {
      says: "the worker gets an eighth of the default weight (cpu_shares: 128; CPUWeight=12 in a systemd unit), PostgreSQL keeps the default",
      check: async () => {
        const compose = readFileSync(join(import.meta.dir, "../../packaging/compose.yaml"), "utf8");
        const service = (name: string) => new RegExp(`^  ${name}:\\n((?:    .*\\n|\\s*\\n)*)`, "m").exec(compose)?.[1] ?? "";
        expect(service("worker")).toContain("cpu_shares: 128");
        expect(service("postgres")).not.toContain("cpu_shares");
        // Compose's default weight is 1024 and systemd's CPUWeight default 100: an eighth of each.
        expect([1024 / 128, Math.floor(100 / 8)]).toEqual([8, 12]);
      },
    },
    {
      says: "the requests it held fail (a job retries, a render answers 404 thumbnail_unavailable with the reason) and the next one starts a new child.",
      // A server whose picture work runs in the niced child (test servers render in-process by default).
      check: () => withServer({ WORKER_NICE: "10" }, async (server) => {
        const o = await org(server);
        const bucket = await newBucket(o);
        const picture = await upload(o.admin, bucket.id, "big.png", await png(4000, 3000), { contentType: "image/png" });
        await thumbnailReady(o.admin, picture.id);
        const host = nicedHost({ nice: server.config.worker.nice, idle: server.config.worker.schedIdle }, server.config.worker.toolTimeoutMs);
        const held = () => (host as unknown as { pending: Map<number, unknown> }).pending.size;
        let killed: number | null = null;
        // A render the child is still making when it is killed; a render that finishes first is tried again larger.
        for (const width of [2990, 3600, 4000]) {
          const answer = renderOf(server, o.adminKey.secret, picture.id, `width=${width}&format=png`);
          const deadline = Date.now() + 60_000;
          let done = false;
          answer.finally(() => (done = true));
          while (!done && Date.now() < deadline && !(held() > 0 && host.pid)) await Bun.sleep(2);
          if (!done && held() > 0 && host.pid) {
            killed = host.pid;
            process.kill(killed, "SIGKILL");
          }
          const res = await answer;
          if (killed === null) continue;
          // The child sent its answer in the moment before the kill reached it: try a larger render.
          if (res.status === 200) {
            killed = null;
            continue;
          }
          expect(res.status).toBe(404);
          const { error } = (await res.json()) as { error: { code: string; message: string } };
          expect(error).toMatchObject({ code: "thumbnail_unavailable", message: "the picture process ended unexpectedly" });
          break;
        }
        expect(killed, "a render was still in the picture child when it was killed").not.toBeNull();
        const again = await renderOf(server, o.adminKey.secret, picture.id, "width=100");
        expect(again.status).toBe(200);
        expect(host.pid).not.toBe(killed);
      }),
    },
    { says: "| pending | being made (also between retries; the last attempt's reason is kept) | 404 thumbnail_pending |", by: { file: DERIVATIVES, test: "right after confirm the thumbnail is pending: thumbnail_pending, then ready" } },
    { says: "| failed | every attempt failed; details.reason says why | 404 thumbnail_unavailable |", by: { file: DERIVATIVES, test: "bad media is retried, then failed with its reason (truncated PNG, text sent as image/png)" } },
    { says: "| unsupported | no thumbnail for this kind, format or size, or a tool is missing | 404 thumbnail_unavailable |", by: { file: DERIVATIVES, test: "3d and other files: unsupported from the moment of confirm, 404 thumbnail_unavailable with the reason" } },
    { says: "200 with Content-Type: image/webp, Content-Length, ETag (the hash of the bytes)", by: { file: DERIVATIVES, test: "PNG: a WebP whose long edge is 320, dimensions in info and in the media view" } },
    { says: "Cache-Control: private, no-cache (clients keep it and revalidate; an unchanged thumbnail answers 304 to If-None-Match without a body).", by: { file: DERIVATIVES, test: "ETag, Cache-Control and 304 on If-None-Match; ?v=<etag> may be cached for good" } },
    { says: "is answered with Cache-Control: private, max-age=31536000, immutable:", by: { file: DERIVATIVES, test: "ETag, Cache-Control and 304 on If-None-Match; ?v=<etag> may be cached for good" } },
    { says: "Other organizations get 404 not_found; a key restricted to another bucket gets 403.", by: { file: DERIVATIVES, test: "other organizations get 404; a key restricted to another bucket gets 403" } },
    { says: '| WORKER_MAX_PIXELS | 200000000 | images with more pixels are refused before decoding (decompression bombs: a few hundred bytes of PNG can claim 10 gigapixels); the job fails with "The image has more than 200 megapixels" |', by: { file: UNIT, test: "a decompression bomb is refused before decoding, with a reason a user understands" } },
    { says: "| WORKER_MAX_PIXELS | 200000000 |", check: defaults({ WORKER_MAX_PIXELS: 200_000_000 }) },
    { says: "| WORKER_MAX_INPUT_BYTES | 2147483648 (2 GiB) | larger objects get no thumbnail (unsupported)", by: { file: DERIVATIVES, test: "a file over the worker's size limit is unsupported, with the reason" } },
    { says: "| WORKER_MAX_INPUT_BYTES | 2147483648 (2 GiB) |", check: defaults({ WORKER_MAX_INPUT_BYTES: 2 * GiB }) },
    {
      says: '| WORKER_TOOL_TIMEOUT_MS | 120000 | reading one video, audio file or PDF is stopped after this long (the demuxer is interrupted, pdf.js\'s task destroyed); the attempt fails with "Reading the ... took longer than 120 s and was stopped" |',
      by: { file: UNIT, test: "a PDF that takes longer than the budget is stopped, with a reason for the user" },
    },
    { says: "| WORKER_TOOL_TIMEOUT_MS | 120000 | reading one video, audio file", by: { file: UNIT, test: "so are a video and an audio file" } },
    { says: "| WORKER_TOOL_TIMEOUT_MS | 120000 |", check: defaults({ WORKER_TOOL_TIMEOUT_MS: 120_000 }) },
    {
      says: "pdf.js reads a PDF whole, so larger PDFs are read from that file into memory, up to 256 MiB; larger ones get no thumbnail (unsupported).",
      check: async () => {
        await inScratch(async (dir) => {
          // A sparse file: 256 MiB and a byte, with no disk behind it.
          const file = join(dir, "huge.pdf");
          const fd = openSync(file, "w");
          ftruncateSync(fd, 256 * MiB + 1);
          closeSync(fd);
          const err = await pdfRenderer.render({ file, dir, contentType: "application/pdf", limits: { maxPixels: 1e8 }, timeoutMs: 10_000 }).catch((e) => e);
          expect(err).toBeInstanceOf(Unsupported);
          expect(err.message).toBe("PDFs larger than 256 MiB get no thumbnail");
        });
      },
    },
    {
      says: "| quality | 1 to 100 (WebP, AVIF, JPEG) | 80 |",
      check: async (server) => {
        const o = await org(server);
        const id = await pictureWithThumbnail(o.admin, `quality-${crypto.randomUUID().slice(0, 8)}`);
        const etag = async (q: string) => (await renderOf(server, o.adminKey.secret, id, `width=40&format=jpeg${q}`)).headers.get("etag");
        // The ETag names every parameter: the default and an explicit 80 are one render.
        expect(await etag("")).toBe(await etag("&quality=80"));
        expect(await etag("&quality=1")).not.toBe(await etag("&quality=100"));
        for (const q of ["0", "101"]) expect((await renderOf(server, o.adminKey.secret, id, `width=40&quality=${q}`)).status).toBe(400);
      },
    },
    {
      says: "(the last 64 MiB of renders also from memory)",
      check: async () => {
        // A memory cache inside the server: answers are the same from it or from storage, so the number is held to the code's.
        expect(RECENT_RENDER_BYTES).toBe(64 * MiB);
      },
    },
    { says: "so If-None-Match answers 304; the header x-render-cache says hit or miss.", by: { file: RENDER, test: "the second identical request is a hit with the same ETag; If-None-Match answers 304 without a body" } },
    { says: "RENDER_MAX_DIMENSION (4096) bounds width and height (400 above it);", by: { file: RENDER, test: "sizes over RENDER_MAX_DIMENSION are refused before anything is read" } },
    { says: 'RENDER_MAX_PIXELS (100 MP) bounds the pictures decoded for a render (404 thumbnail_unavailable "The image has more than 100 megapixels...");', by: { file: RENDER, test: "a source with more pixels than RENDER_MAX_PIXELS is not decoded" } },
    {
      says: "images over RENDER_MAX_SOURCE_BYTES (32 MiB) are not rendered on the fly;",
      check: async () => {
        await withServer({ RENDER_MAX_SOURCE_BYTES: String(MiB) }, async (small) => {
          const o = await org(small);
          const bucket = await newBucket(o);
          // A noisy picture: well over a MiB as PNG.
          const noise = Buffer.alloc(800 * 800 * 3);
          for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
          const sharp = (await import("sharp")).default;
          const bytes = await sharp(noise, { raw: { width: 800, height: 800, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
          expect(bytes.length).toBeGreaterThan(MiB);
          const big = await upload(o.admin, bucket.id, "noise.png", bytes, { contentType: "image/png" });
          await thumbnailReady(o.admin, big.id);
          const res = await renderOf(small, o.adminKey.secret, big.id, "width=100");
          expect(res.status).toBe(404);
          expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "thumbnail_unavailable", message: "Images larger than 1 MiB are not rendered on the fly" });
        });
      },
    },
    { says: "RENDER_MAX_SOURCE_BYTES (32 MiB)", check: defaults({ RENDER_MAX_SOURCE_BYTES: 32 * MiB, RENDER_MAX_DIMENSION: 4096, RENDER_MAX_PIXELS: 100_000_000, RENDER_CACHE_BYTES: GiB }) },
    { says: "renders are kept under RENDER_CACHE_BYTES (1 GiB), the oldest deleted first.", by: { file: RENDER, test: "the organization's render cache stays under RENDER_CACHE_BYTES: the oldest renders go first" } },
    { says: "Every render answered with bytes counts as egress (usage event render)", by: { file: RENDER, test: "renders count as egress" } },
    {
      says: "summed in memory per object and written with the server's next egress batch, within 250 ms (docs/billing.md).",
      check: async (server) => {
        expect(server.services.deps.egress!.intervalMs).toBe(250);
        expect(new EgressLedger(server.services.deps.db, server.services.deps.log).intervalMs).toBe(250);
      },
    },
    { says: "While the object's thumbnail is being made: 404 thumbnail_pending.", by: { file: DERIVATIVES, test: "right after confirm the thumbnail is pending: thumbnail_pending, then ready" } },
    { says: "Audio, 3D and other files, or a file that failed: 404 thumbnail_unavailable with the reason.", by: { file: RENDER, test: "what cannot be rendered says why: audio, bad parameters" } },
    { says: "or using it after expires answers 403 (This render URL has expired for the last)", by: { file: RENDER, test: "expired: refused with a message saying so" } },
    { says: "changing any of them, spelling the query any other way", by: { file: RENDER, test: "tampered: another size, another signature, a later expiry are all refused" } },
    { says: "spelling the query any other way (width=1e2 for width=100, a leading zero, another order)", by: { file: RENDER, test: "one signature, one URL: other spellings of the same parameters are refused" } },
    { says: "using it for another organization's object", by: { file: RENDER, test: "another organization's object: its id in a URL signed here, or the other way round, is refused" } },
    {
      says: "| REDIS_URL | unset | set: BullMQ on Redis; unset: the in-process queue |",
      check: defaults({
        REDIS_URL: null,
        REDIS_PREFIX: "media",
        WORKER_INLINE: true,
        WORKER_CONCURRENCY: 2,
        WORKER_ATTEMPTS: 3,
        WORKER_BACKOFF_MS: 2000,
        WORKER_LOCK_MS: 30_000,
        WORKER_STALLED_INTERVAL_MS: 30_000,
        WORKER_TOOL_TIMEOUT_MS: 120_000,
        WORKER_MAX_INPUT_BYTES: 2 * GiB,
        WORKER_MAX_PIXELS: 200_000_000,
        WORKER_NICE: 10,
        WORKER_SCHED_IDLE: true,
        RENDER_MAX_DIMENSION: 4096,
        RENDER_MAX_PIXELS: 100_000_000,
        RENDER_MAX_SOURCE_BYTES: 32 * MiB,
        RENDER_CACHE_BYTES: GiB,
        RENDER_URL_MAX_SECONDS: 30 * 86_400,
      }),
    },
    { says: "| WORKER_MAX_INPUT_BYTES | 2 GiB | see Limits |", check: defaults({ WORKER_MAX_INPUT_BYTES: 2 * GiB }) },
    { says: "| RENDER_MAX_SOURCE_BYTES | 33554432 (32 MiB) | see Renders | | RENDER_CACHE_BYTES | 1073741824 (1 GiB) | see Renders | | RENDER_URL_MAX_SECONDS | 2592000 (30 days) | see Signed render URLs |", check: defaults({ RENDER_MAX_SOURCE_BYTES: 33_554_432, RENDER_CACHE_BYTES: 1_073_741_824, RENDER_URL_MAX_SECONDS: 2_592_000 }) },
    {
      says: "(videoPoster in worker/derivatives/video.ts, up to 1280 px or the largest item)",
      check: async () => {
        expect(POSTER_EDGE).toBe(1280);
        await inScratch(async (dir) => {
          const file = join(dir, "wide.mp4");
          writeFileSync(file, await mp4(1, "1920x1080"));
          const edge = async (e: number) => {
            const { poster } = await videoPoster(file, { edge: e, timeoutMs: 60_000 });
            return Math.max(poster.width, poster.height);
          };
          // set-variants asks for max(largest item, POSTER_EDGE); the frame never grows past the video.
          expect(await edge(POSTER_EDGE)).toBe(1280);
          expect(await edge(1600)).toBe(1600);
          expect(await edge(4000)).toBe(1920);
        });
      },
    },
    { says: "each rendition is at most 40 megapixels and an encoded one over 64 MiB is not stored", by: { file: "test/claims/docs-organizing.ts", test: "The worker also skips any item over 40 megapixels and any encoded rendition over 64 MiB (logged)." } },
  ],
  notPromises: [
    {
      says: "Before, a job held its slot from start to end, and on two cores the thumbnail path made 67-77% of the thumbnails per second a bare loop of the same decoding made; with decoding slots, 75-80% (bench/RESULTS.md).",
      why: "throughput measured by npm run bench -- thumbs on a quiet two-core machine (bench/RESULTS.md, bench/notes/2026-11-30-decoding-slots.md); what holds is the slot bound, claimed above",
    },
    {
      says: "(before, both shared two slots: a thumbnail waited 150 s behind two trickling imports, 200 s behind 40 deliveries to endpoints that hung)",
      why: "measured in the 2026 attack run (slow imports and hanging webhook endpoints) on the release before the classes; what holds now is claimed above with test/integration/job-classes.test.ts",
    },
    {
      says: "in slices of 15 ms",
      why: "how the decoder yields to other work, chosen by measurement (bench/notes/2026-11-24-media-processing.md, 'Posters, PDF pages and waveforms without ffmpeg or poppler': 15 ms slices, and the per-frame calls that cost four times the decoding); nothing a client can observe",
    },
    { says: "itself draws only the 320 px thumbnail (drawing the page at 1280 px on every upload cost a PDF thumbnail about three times as much: bench/notes/2026-11-24-media-processing.md).", why: "a measurement (bench/notes/2026-11-24-media-processing.md: why the worker stopped drawing the page at 1280 px); the 320 px thumbnail itself is claimed above" },
    { says: "uncached renders the API process's own CPU fell from 47 s to 8 s over the phase", why: MEASURED_NEIGHBOURS },
    { says: "PostgreSQL and Redis at four times the default weight did not help (2.4-5.0x, against 1.8-2.9x as sessions in the same run)", why: `${MEASURED_NEIGHBOURS}, ninth sitting` },
    { says: "Images and PDFs up to 32 MiB are read into memory (cheaper than a temporary file: bench/notes/2026-11-22-thumbnails.md)", why: "where the worker keeps the bytes while it reads them, chosen by measurement (bench/notes/2026-11-22-thumbnails.md); a client gets the same thumbnail either way (test/unit/render.test.ts 'takes the file on disk as well as bytes in memory')" },
  ],
} satisfies PageClaims;
