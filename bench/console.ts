/**
 * `npm run bench -- console`: the web console in Debian's Chromium (playwright-core), against a
 * server on the `npm start` defaults (embedded database and storage node) holding 10,000
 * objects in one bucket (BENCH_OBJECTS), every one with a real WebP thumbnail.
 *
 * - First load, cold (a new browser context each run, so nothing cached): bytes transferred
 *   (the console's own files, then everything until the grid shows 50 thumbnails) and the time
 *   from navigation until 50 thumbnails are on screen. Median of BENCH_RUNS runs (5).
 * - Scrolling: the grid scrolled from the first object to the last at a steady speed
 *   (BENCH_SCROLL_SECONDS, 10), one step per animation frame; frames dropped = frames that
 *   came later than one 60 Hz interval after the previous, counted in missed intervals.
 * BENCH_NO_WRITE=1 leaves bench/results/console.md alone.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { SignJWT } from "jose";
import { type Browser, chromium } from "playwright-core";
import sharp from "sharp";
import { loadConfig } from "../app/config.ts";
import { createHttpApp } from "../app/http.ts";
import { createServices } from "../app/services.ts";
import { mediaObjects } from "../db/schema/index.ts";
import { derivatives } from "../db/schema/index.ts";
import { derivativeKey, THUMBNAIL } from "../domain/derivatives/derivatives.ts";
import { int, load1, median, writeSection } from "./_load.ts";
import { seed } from "./_seed.ts";

const N = Number(process.env.BENCH_OBJECTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SCROLL_SECONDS = Number(process.env.BENCH_SCROLL_SECONDS ?? 10);
const VIEWPORT = { width: 1920, height: 1080 };
const JWT_SECRET = "bench-console-secret-0123456789";
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const dataDir = join(import.meta.dir, ".work", `console-${Date.now()}`);
mkdirSync(dataDir, { recursive: true });
const config = loadConfig({ DATA_DIR: dataDir, STORAGE_PORT: "0", LOG_LEVEL: "error", RATE_LIMIT_PER_MINUTE: "100000000", JWT_SECRET, PORT: "0" });
const services = await createServices(config);
const app = createHttpApp(services).listen({ hostname: "127.0.0.1", port: 0 });
const base = `http://127.0.0.1:${app.server!.port}`;
const { deps } = services;
let browser: Browser | undefined;

try {
  process.stderr.write(`seeding ${int(N)} objects with thumbnails…\n`);
  const seeded = Date.now();
  const { orgId, bucketId } = await seed(deps.db, N);
  // All pictures, so every tile has a thumbnail to show (the seed mixes kinds).
  await deps.db.execute(sql`update media_objects set kind = 'image' where org_id = ${orgId}`);
  const ids = (await deps.db.select({ id: mediaObjects.id }).from(mediaObjects).where(eq(mediaObjects.orgId, orgId))).map((r) => r.id);
  await putThumbnails(bucketId, ids);
  process.stderr.write(`seeded in ${((Date.now() - seeded) / 1000).toFixed(1)} s\n`);
  const jwt = await new SignJWT({ sub: crypto.randomUUID(), org_id: orgId })
    .setProtectedHeader({ alg: "HS256" })
    .setExpirationTime("2h")
    .sign(new TextEncoder().encode(JWT_SECRET));

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  // Warm the server once (the bundle is built on the first page view), as a running server is.
  await fetch(`${base}/console`).then((r) => r.text());

  const loads: FirstLoad[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = await firstLoad(browser, jwt, bucketId);
    process.stderr.write(`first load ${i + 1}: ${run.ms.toFixed(0)} ms, console ${int(run.consoleBytes)} B, total ${int(run.totalBytes)} B in ${run.requests} requests\n`);
    loads.push(run);
  }
  const scroll = await scrolling(browser, jwt, bucketId);
  process.stderr.write(`scroll: ${JSON.stringify(scroll)}\n`);

  const m = (k: keyof FirstLoad) => median(loads.map((l) => l[k] as number));
  const section = `## console — the web console's first load and a scroll through ${int(N)} objects (written by \`npm run bench -- console\`)

${new Date().toISOString().slice(0, 10)}; 2 vCPU, Bun ${Bun.version}, Chromium ${browser.version()} headless (no GPU), viewport ${VIEWPORT.width}×${VIEWPORT.height}; server on the \`npm start\` defaults (embedded database and storage) in the bench process; load average ${load1()} at the end.

| first load, cold (median of ${RUNS}) | value |
|---|---|
| console files (HTML, JS, CSS; gzip) | ${int(m("consoleBytes"))} B in ${m("consoleRequests")} requests |
| everything until 50 thumbnails show (API answers and thumbnails included) | ${int(m("totalBytes"))} B in ${m("requests")} requests |
| navigation to the grid's first tile | ${m("firstTileMs").toFixed(0)} ms |
| navigation to 50 thumbnails on screen | **${m("ms").toFixed(0)} ms** |

| scroll from the first object to the last in ${SCROLL_SECONDS} s (${int(scroll.pixels)} px) | value |
|---|---|
| animation frames | ${int(scroll.frames)} |
| frames dropped (missed 60 Hz intervals) | **${int(scroll.dropped)}** (${((100 * scroll.dropped) / Math.max(1, scroll.frames + scroll.dropped)).toFixed(1)}%) |
| the same page standing still for 3 s, for comparison | ${int(scroll.idleDropped)} dropped of ${int(scroll.idleFrames + scroll.idleDropped)} (${((100 * scroll.idleDropped) / Math.max(1, scroll.idleFrames + scroll.idleDropped)).toFixed(1)}%) |
| longest frame | ${scroll.longestMs.toFixed(1)} ms |
| main thread during the scroll: tasks / script / layout / style | ${int(scroll.taskMs)} / ${int(scroll.scriptMs)} / ${int(scroll.layoutMs)} / ${int(scroll.styleMs)} ms |
| tiles in the page at once (most) | ${int(scroll.maxTiles)} |
| list pages fetched / thumbnails fetched | ${int(scroll.pages)} / ${int(scroll.thumbnails)} |
| last object reached and drawn | ${scroll.reachedEnd ? "yes" : "no"} |
`;
  console.log(section);
  if (process.env.BENCH_NO_WRITE !== "1") writeSection("console", section);
} finally {
  await browser?.close();
  await app.stop(true);
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
}

/** A small WebP per object, stored and recorded the way the worker does it. */
async function putThumbnails(bucketId: string, objectIds: string[]) {
  const palette = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      sharp({ create: { width: 256, height: 192, channels: 3, background: { r: (i * 53) % 256, g: (i * 97) % 256, b: (i * 151) % 256 } } })
        .webp({ quality: 70 })
        .toBuffer(),
    ),
  );
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < objectIds.length; i = next++) {
      const objectId = objectIds[i]!;
      const bytes = palette[i % palette.length]!;
      const etag = new Bun.CryptoHasher("sha256").update(bytes).update(objectId).digest("hex").slice(0, 32);
      const key = derivativeKey({ bucketId, objectId, variant: THUMBNAIL, etag, contentType: "image/webp" });
      await deps.storage.put(key, new Uint8Array(bytes), { contentType: "image/webp" });
      await deps.db
        .insert(derivatives)
        .values({ objectId, variant: THUMBNAIL, state: "ready", storageKey: key, contentType: "image/webp", size: bytes.length, width: 256, height: 192, etag })
        .onConflictDoNothing();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  const [{ n } = { n: 0 }] = await deps.db.select({ n: sql<number>`count(*)::int` }).from(derivatives).where(and(eq(derivatives.variant, THUMBNAIL), eq(derivatives.state, "ready")));
  if (n < objectIds.length) throw new Error(`only ${n} thumbnails recorded`);
}

interface FirstLoad {
  ms: number;
  firstTileMs: number;
  consoleBytes: number;
  consoleRequests: number;
  totalBytes: number;
  requests: number;
}

async function signedInPage(b: Browser, jwt: string) {
  const context = await b.newContext({ viewport: VIEWPORT });
  // Signed in as the sign-in page would leave it: the credential in this tab's sessionStorage.
  await context.addInitScript((token) => sessionStorage.setItem("media-console.credential", token), jwt);
  const page = await context.newPage();
  return { context, page };
}

async function firstLoad(b: Browser, jwt: string, bucketId: string): Promise<FirstLoad> {
  const { context, page } = await signedInPage(b, jwt);
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
  const urls = new Map<string, string>();
  const sizes: { url: string; bytes: number }[] = [];
  cdp.on("Network.responseReceived", (e) => urls.set(e.requestId, e.response.url));
  cdp.on("Network.loadingFinished", (e) => sizes.push({ url: urls.get(e.requestId) ?? "", bytes: e.encodedDataLength }));
  // The seed puts every key under photos/: the grid shows that folder.
  await page.goto(`${base}/console/buckets/${bucketId}?folder=photos%2F`, { waitUntil: "commit" });
  const firstTileMs = await page.waitForFunction(() => document.querySelector(".grid-sizer .tile[data-id]") && performance.now(), undefined, { polling: "raf", timeout: 60_000 }).then((h) => h.jsonValue() as Promise<number>);
  const ms = await page
    .waitForFunction(
      () => {
        const shown = [...document.querySelectorAll<HTMLImageElement>(".grid-sizer img.thumb-img")].filter((i) => i.complete && i.naturalWidth > 0);
        return shown.length >= 50 && performance.now();
      },
      undefined,
      { polling: "raf", timeout: 60_000 },
    )
    .then((h) => h.jsonValue() as Promise<number>);
  await page.waitForTimeout(100);
  const own = sizes.filter((s) => new URL(s.url).pathname.startsWith("/console"));
  await context.close();
  return {
    ms,
    firstTileMs,
    consoleBytes: own.reduce((t, s) => t + s.bytes, 0),
    consoleRequests: own.length,
    totalBytes: sizes.reduce((t, s) => t + s.bytes, 0),
    requests: sizes.length,
  };
}

async function scrolling(b: Browser, jwt: string, bucketId: string) {
  const { context, page } = await signedInPage(b, jwt);
  let pages = 0;
  let thumbnails = 0;
  page.on("request", (r) => {
    const path = new URL(r.url()).pathname;
    if (path === "/api/media") pages++;
    // Signed thumbnail paths (a listing's thumbnail.path), or the bearer's media_thumbnail.
    else if (path.startsWith("/api/thumbnails/") || path.endsWith("/thumbnail")) thumbnails++;
  });
  await page.goto(`${base}/console/buckets/${bucketId}?folder=photos%2F`);
  await page.waitForSelector(".grid-sizer img.thumb-img");
  await page.waitForTimeout(1000);
  // What this machine drops with the page standing still, so the scroll's count can be read against it.
  const idle = await page.evaluate(async (seconds) => {
    const times: number[] = [];
    await new Promise<void>((done) => {
      const start = performance.now();
      const step = (now: number) => {
        times.push(now);
        if (now - start < seconds * 1000) requestAnimationFrame(step);
        else done();
      };
      requestAnimationFrame(step);
    });
    let dropped = 0;
    for (let i = 1; i < times.length; i++) dropped += Math.max(0, Math.round((times[i]! - times[i - 1]!) / (1000 / 60)) - 1);
    return { frames: times.length, dropped };
  }, 3);
  const cdp = await context.newCDPSession(page);
  await cdp.send("Performance.enable");
  const metrics = async () => Object.fromEntries(((await cdp.send("Performance.getMetrics")) as { metrics: { name: string; value: number }[] }).metrics.map((m) => [m.name, m.value]));
  const before = await metrics();
  const result = await page.evaluate(async (seconds) => {
    const el = document.querySelector<HTMLElement>(".grid-scroll")!;
    const end = el.scrollHeight - el.clientHeight;
    const times: number[] = [];
    let maxTiles = 0;
    await new Promise<void>((done) => {
      const start = performance.now();
      const step = (now: number) => {
        times.push(now);
        maxTiles = Math.max(maxTiles, el.querySelectorAll(".tile-slot").length);
        const t = Math.min(1, (now - start) / (seconds * 1000));
        el.scrollTop = t * end;
        if (t < 1) requestAnimationFrame(step);
        else done();
      };
      requestAnimationFrame(step);
    });
    const interval = 1000 / 60;
    let dropped = 0;
    let longest = 0;
    for (let i = 1; i < times.length; i++) {
      const dt = times[i]! - times[i - 1]!;
      longest = Math.max(longest, dt);
      dropped += Math.max(0, Math.round(dt / interval) - 1);
    }
    return { frames: times.length, dropped, longestMs: longest, maxTiles, pixels: end };
  }, SCROLL_SECONDS);
  const after = await metrics();
  const spent = (name: string) => Math.round(((after[name] ?? 0) - (before[name] ?? 0)) * 1000);
  const work = { scriptMs: spent("ScriptDuration"), layoutMs: spent("LayoutDuration"), styleMs: spent("RecalcStyleDuration"), taskMs: spent("TaskDuration") };
  const total = N;
  const reachedEnd = await page
    .waitForSelector(`.tile[data-index="${total - 1}"]`, { timeout: 15_000 })
    .then(() => true)
    .catch(() => false);
  await context.close();
  return { ...result, ...work, pages, thumbnails, reachedEnd, idleFrames: idle.frames, idleDropped: idle.dropped };
}
