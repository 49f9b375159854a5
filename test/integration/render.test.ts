import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { and, eq, inArray } from "drizzle-orm";
import sharp from "sharp";
import { thumbHashToAverageRGBA } from "thumbhash";
import { derivatives, usageMonthly } from "../../db/schema/index.ts";
import { renderCacheBytes, renderKey } from "../../domain/derivatives/render.ts";
import { signRenderUrl } from "../../domain/derivatives/render-urls.ts";
import { renderParams } from "../../contract/render.ts";
import { parseExif } from "../../worker/derivatives/exif.ts";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import { fadeInMp4, gpsJpeg, halves, mp3, mp4, pdf, png } from "../support/media-files.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { sha256, upload } from "../support/upload.ts";

let server: TestServer;
let org: TestOrg;
let other: TestOrg;
let bucket: { id: string };
const ids: Record<string, string> = {};

/** Renders over 200 kB of one organization push the oldest out (RENDER_CACHE_BYTES). */
const CACHE_BYTES = 400_000;

beforeAll(async () => {
  // The renders' time budget per organization is off: it counts wall time, which a busy machine
  // stretches until these back-to-back renders are refused with 429 (render-budget.test.ts tests it).
  server = await startServer({ env: { RENDER_CACHE_BYTES: String(CACHE_BYTES), RENDER_MAX_PIXELS: "2000000", RENDER_MAX_DIMENSION: "2000", ORG_RENDER_MS_PER_SECOND: "0" } });
  org = await newOrg(server);
  other = await newOrg(server);
  bucket = (await org.admin.post("/api/buckets", { name: "renders" })).body;
  const files: [string, Buffer | Promise<Buffer>, string][] = [
    ["photo.png", png(800, 600), "image/png"],
    ["halves.png", halves(400, 200), "image/png"],
    ["geo.jpg", gpsJpeg(400, 300), "image/jpeg"],
    ["huge.png", png(2000, 1500), "image/png"],
    ["clip.mp4", fadeInMp4(1, 2), "video/mp4"],
    ["doc.pdf", Promise.resolve(pdf(2, 612, 792, { title: "Quarterly", author: "Finance" })), "application/pdf"],
    ["tone.mp3", mp3(2), "audio/mpeg"],
  ];
  for (const [key, bytes, contentType] of files) ids[key] = (await upload(org.admin, bucket.id, key, await bytes, { contentType })).id;
  for (const id of Object.values(ids)) await settled(id);
}, 120_000);
afterAll(() => server.stop());

async function settled(id: string, api = org.admin) {
  return eventually(
    async () => {
      const res = await api.get(`/api/media/${id}`);
      return res.body.thumbnail && res.body.thumbnail.state !== "pending" ? res.body : undefined;
    },
    { timeoutMs: WAIT_CEILING_MS, what: `the derivatives of ${id}` },
  );
}

async function render(id: string, query: Record<string, string | number>, headers: Record<string, string> = {}, token = org.adminKey.secret) {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  const res = await fetch(`${server.url}/api/media/${id}/render?${qs}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { res, bytes, meta: res.status === 200 ? await sharp(bytes).metadata() : null };
}

describe("media_render: every parameter", () => {
  test("width alone, height alone: the aspect ratio decides the other side", async () => {
    expect((await render(ids["photo.png"]!, { width: 400 })).meta).toMatchObject({ width: 400, height: 300 });
    expect((await render(ids["photo.png"]!, { height: 150 })).meta).toMatchObject({ width: 200, height: 150 });
  });
  test("fit: cover and fill give the box exactly, contain letterboxes to it, inside stays within and never enlarges", async () => {
    expect((await render(ids["photo.png"]!, { width: 200, height: 200, fit: "cover" })).meta).toMatchObject({ width: 200, height: 200 });
    expect((await render(ids["photo.png"]!, { width: 200, height: 100, fit: "fill" })).meta).toMatchObject({ width: 200, height: 100 });
    const contain = await render(ids["photo.png"]!, { width: 200, height: 200, fit: "contain", format: "png" });
    expect(contain.meta).toMatchObject({ width: 200, height: 200, hasAlpha: true });
    const { data } = await sharp(contain.bytes).raw().toBuffer({ resolveWithObject: true });
    expect(data[3]).toBe(0); // the top band is letterbox: transparent
    expect((await render(ids["photo.png"]!, { width: 200, height: 200, fit: "inside" })).meta).toMatchObject({ width: 200, height: 150 });
    expect((await render(ids["photo.png"]!, { width: 1600, fit: "inside" })).meta).toMatchObject({ width: 800, height: 600 });
  });
  test("format: webp, avif, jpeg, png by name; auto follows Accept", async () => {
    for (const [format, type, sharpName] of [["webp", "image/webp", "webp"], ["avif", "image/avif", "heif"], ["jpeg", "image/jpeg", "jpeg"], ["png", "image/png", "png"]] as const) {
      const r = await render(ids["photo.png"]!, { width: 64, format });
      expect(r.res.headers.get("content-type")).toBe(type);
      expect(r.meta!.format).toBe(sharpName);
    }
    const browser = await render(ids["photo.png"]!, { width: 64 }, { accept: "image/avif,image/webp,*/*" });
    expect(browser.res.headers.get("content-type")).toBe("image/webp");
    expect(browser.res.headers.get("vary")).toBe("Accept");
    const old = await render(ids["photo.png"]!, { width: 64 }, { accept: "image/jpeg,image/png" });
    expect(old.res.headers.get("content-type")).toBe("image/jpeg");
  });
  test("quality: a lower quality is a smaller file", async () => {
    const low = await render(ids["photo.png"]!, { width: 400, format: "jpeg", quality: 10 });
    const high = await render(ids["photo.png"]!, { width: 400, format: "jpeg", quality: 95 });
    expect(low.bytes.byteLength).toBeLessThan(high.bytes.byteLength / 2);
  });
  test("gravity: a cover crop keeps the side it names", async () => {
    const colour = async (gravity: string) => {
      const r = await render(ids["halves.png"]!, { width: 100, height: 100, fit: "cover", gravity, format: "png" });
      const { dominant } = await sharp(r.bytes).stats();
      return dominant;
    };
    expect(await colour("west")).toMatchObject({ r: 248, b: 8 });
    expect(await colour("east")).toMatchObject({ r: 8, b: 248 });
  });
  test("video posters and PDF pages render too, from a picture made on the first render and kept", async () => {
    const poster = await render(ids["clip.mp4"]!, { width: 160, format: "jpeg" });
    expect(poster.meta).toMatchObject({ width: 160, height: 120, format: "jpeg" });
    const page = await render(ids["doc.pdf"]!, { width: 300, format: "png" });
    expect(page.meta).toMatchObject({ width: 300, height: 388, format: "png" });
    // The first render kept the poster frame and the page (up to 1280 px) for the next ones.
    const sources = await server.services.deps.db.select().from(derivatives).where(and(eq(derivatives.variant, "source"), inArray(derivatives.objectId, [ids["clip.mp4"]!, ids["doc.pdf"]!])));
    const byObject = Object.fromEntries(sources.map((r) => [r.objectId, { contentType: r.contentType, width: r.width, height: r.height, state: r.state }]));
    expect(byObject).toEqual({
      [ids["clip.mp4"]!]: { contentType: "image/jpeg", width: 320, height: 240, state: "ready" },
      [ids["doc.pdf"]!]: { contentType: "image/png", width: 989, height: 1280, state: "ready" },
    });
    for (const r of sources) expect(await server.services.deps.storage.head(r.storageKey!)).not.toBeNull();
    expect((await render(ids["doc.pdf"]!, { width: 1000, format: "png" })).meta).toMatchObject({ width: 989, height: 1280 });
  });
  test("what cannot be rendered says why: audio, bad parameters", async () => {
    const audio = await render(ids["tone.mp3"]!, { width: 100 });
    expect(audio.res.status).toBe(404);
    expect(JSON.parse(audio.bytes.toString()).error.code).toBe("thumbnail_unavailable");
    for (const bad of [{ width: 0 }, { width: "wide" }, { fit: "stretch" }, { format: "gif" }, { quality: 101 }, { gravity: "up" }, { colour: "red" }]) {
      const r = await render(ids["photo.png"]!, bad as unknown as Record<string, string>);
      expect(r.res.status).toBe(400);
      expect(JSON.parse(r.bytes.toString()).error.code).toBe("validation_error");
    }
  });
});

describe("limits", () => {
  test("sizes over RENDER_MAX_DIMENSION are refused before anything is read", async () => {
    const r = await render(ids["photo.png"]!, { width: 2001 });
    expect(r.res.status).toBe(400);
    expect(JSON.parse(r.bytes.toString()).error).toMatchObject({ code: "validation_error", details: [{ path: "width", message: "Must be at most 2000" }] });
  });
  test("a source with more pixels than RENDER_MAX_PIXELS is not decoded", async () => {
    const r = await render(ids["huge.png"]!, { width: 100 });
    expect(r.res.status).toBe(404);
    const error = JSON.parse(r.bytes.toString()).error;
    expect(error.code).toBe("thumbnail_unavailable");
    expect(error.message).toContain("megapixels");
  });
  test("the organization's render cache stays under RENDER_CACHE_BYTES: the oldest renders go first", async () => {
    const first = await render(ids["photo.png"]!, { width: 790, format: "png" });
    const firstKey = renderKey(bucket.id, ids["photo.png"]!, first.res.headers.get("etag")!.replaceAll('"', ""), "png");
    expect(await server.services.deps.storage.head(firstKey)).not.toBeNull();
    for (const width of [780, 770, 760]) await render(ids["photo.png"]!, { width, format: "png" });
    expect(await renderCacheBytes(server.services.deps, org.orgId)).toBeLessThanOrEqual(CACHE_BYTES);
    expect(await server.services.deps.storage.head(firstKey)).toBeNull();
    expect((await render(ids["photo.png"]!, { width: 790, format: "png" })).res.headers.get("x-render-cache")).toBe("miss");
  });
  test("renders count as egress", async () => {
    const month = async () => (await server.services.rollup.flush(), await server.services.deps.db.select().from(usageMonthly).where(eq(usageMonthly.orgId, org.orgId)))[0]?.egressBytes ?? 0;
    const before = await month();
    const r = await render(ids["photo.png"]!, { width: 333, format: "webp" });
    await eventually(async () => ((await month()) >= before + r.bytes.byteLength ? true : undefined), { what: "the render's egress" });
  });
});

describe("cache", () => {
  test("the second identical request is a hit with the same ETag; If-None-Match answers 304 without a body", async () => {
    const a = await render(ids["photo.png"]!, { width: 321, format: "webp" });
    const b = await render(ids["photo.png"]!, { width: 321, format: "webp" });
    expect([a.res.headers.get("x-render-cache"), b.res.headers.get("x-render-cache")]).toEqual(["miss", "hit"]);
    expect(b.res.headers.get("etag")).toBe(a.res.headers.get("etag"));
    expect(b.bytes.equals(a.bytes)).toBe(true);
    expect(a.res.headers.get("cache-control")).toBe("private, no-cache");
    const again = await render(ids["photo.png"]!, { width: 321, format: "webp" }, { "if-none-match": a.res.headers.get("etag")! });
    expect(again.res.status).toBe(304);
    expect(again.bytes.byteLength).toBe(0);
    // stored beside the object's other derivatives
    const key = renderKey(bucket.id, ids["photo.png"]!, a.res.headers.get("etag")!.replaceAll('"', ""), "webp");
    expect(key).toStartWith(`_derivatives/${bucket.id}/${ids["photo.png"]}/render-`);
    expect(await server.services.deps.storage.head(key)).not.toBeNull();
  });
  test("overwriting the object changes the render (a new ETag), never the old picture", async () => {
    const key = "overwrite.png";
    const first = await upload(org.admin, bucket.id, key, await png(300, 300), { contentType: "image/png" });
    await settled(first.id);
    const a = await render(first.id, { width: 100 });
    await upload(org.admin, bucket.id, key, await png(600, 300), { contentType: "image/png" });
    await eventually(async () => ((await org.admin.get(`/api/media/${first.id}`)).body.thumbnail.state === "ready" ? true : undefined), { what: "the new thumbnail" });
    const b = await render(first.id, { width: 100 });
    expect(b.res.headers.get("etag")).not.toBe(a.res.headers.get("etag"));
    expect(b.meta).toMatchObject({ width: 100, height: 50 });
  });
});

describe("access", () => {
  test("other organizations get 404; a key restricted to another bucket 403; no credential 401", async () => {
    expect((await render(ids["photo.png"]!, { width: 50 }, {}, other.adminKey.secret)).res.status).toBe(404);
    const elsewhere = (await org.admin.post("/api/buckets", { name: "render-elsewhere" })).body;
    const restricted = await org.keyClient(["read"], { bucketId: elsewhere.id });
    expect((await render(ids["photo.png"]!, { width: 50 }, {}, restricted.secret)).res.status).toBe(403);
    expect((await fetch(`${server.url}/api/media/${ids["photo.png"]}/render?width=50`)).status).toBe(401);
  });
});

describe("signed render URLs", () => {
  async function signed(id: string, body: Record<string, unknown> = {}, api = org.admin) {
    const qs = new URLSearchParams(Object.entries({ width: 120, ...body }).map(([k, v]) => [k, String(v)]));
    const res = await api.get(`/api/media/${id}/render-url?${qs}`);
    expect(res.status).toBe(200);
    return res.body as { url: string; expiresAt: string; expiresIn: number };
  }
  const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

  test("works in an <img> tag: no credential, ETag, cached publicly until it expires", async () => {
    const s = await signed(ids["photo.png"]!, { expiresIn: 3600 });
    expect(s.url).toStartWith(`${server.url}/api/render/${ids["photo.png"]}?`);
    expect(s.expiresIn).toBe(3600);
    const res = await fetch(s.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/webp");
    expect(res.headers.get("cache-control")).toMatch(/^public, max-age=(3600|359\d), immutable$/);
    const etag = res.headers.get("etag")!;
    expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width).toBe(120);
    const again = await fetch(s.url, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
  });
  test("tampered: another size, another signature, a later expiry are all refused", async () => {
    const s = await signed(ids["photo.png"]!);
    for (const tampered of [s.url.replace("width=120", "width=1200"), s.url.replace(/signature=[^&]+/, "signature=AAAA"), s.url.replace(/expires=(\d+)/, (_, e) => `expires=${Number(e) + 1000}`), s.url.replace(/&signature=[^&]+/, "")]) {
      const res = await fetch(tampered);
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe("forbidden");
    }
    expect((await fetch(`${s.url}&quality=10`)).status).toBe(403);
  });
  test("one signature, one URL: other spellings of the same parameters are refused", async () => {
    const s = await signed(ids["photo.png"]!);
    expect((await fetch(s.url)).status).toBe(200);
    const u = new URL(s.url);
    const expires = u.searchParams.get("expires")!;
    const reordered = `${u.origin}${u.pathname}?expires=${expires}&width=120&signature=${u.searchParams.get("signature")}`;
    for (const other of [s.url.replace("width=120", "width=1.2e2"), s.url.replace("width=120", "width=0120"), s.url.replace("width=120", "width=%2B120"), s.url.replace(`expires=${expires}`, `expires=0${expires}`), reordered, `${s.url}&`]) {
      const res = await fetch(other);
      expect({ other, status: res.status }).toEqual({ other, status: 403 });
      await res.arrayBuffer();
    }
  });
  test("expired: refused with a message saying so", async () => {
    const deps = server.services.deps;
    const past = { now: () => new Date(Date.now() - 7200_000) };
    const caller = { orgId: org.orgId, userId: org.userId, apiKeyId: null, scopes: new Set(["read"] as const), bucketId: null, principal: "test" };
    const s = await signRenderUrl({ ...deps, clock: past }, caller, ids["photo.png"]!, renderParams.parse({ width: 120 }), 3600);
    const res = await fetch(`${server.url}${s.path}`);
    expect(res.status).toBe(403);
    expect((await errorOf(res)).message).toBe("This render URL has expired");
  });
  test("another organization's object: its id in a URL signed here, or the other way round, is refused", async () => {
    const theirBucket = (await other.admin.post("/api/buckets", { name: "theirs" })).body;
    const theirs = await upload(other.admin, theirBucket.id, "their.png", await png(100, 100), { contentType: "image/png" });
    await settled(theirs.id, other.admin);
    const mine = await signed(ids["photo.png"]!);
    expect((await fetch(mine.url.replace(ids["photo.png"]!, theirs.id))).status).toBe(403);
    const theirUrl = await signed(theirs.id, {}, other.admin);
    expect((await fetch(theirUrl.url)).status).toBe(200);
    expect((await fetch(theirUrl.url.replace(theirs.id, ids["photo.png"]!))).status).toBe(403);
    // and signing needs access to the object in the first place
    expect((await other.admin.get(`/api/media/${ids["photo.png"]}/render-url?width=10`)).status).toBe(404);
  });
  test("expiresIn beyond the longest allowed is refused", async () => {
    const res = await org.admin.get(`/api/media/${ids["photo.png"]}/render-url?width=10&expiresIn=${90 * 86400}`);
    expect(res.status).toBe(400);
  });
});

describe("MCP", () => {
  test("media_render returns the description and the image itself", async () => {
    const client = new Client({ name: "t", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${org.adminKey.secret}` } } }));
    try {
      const result = await client.callTool({ name: "media_render", arguments: { id: ids["doc.pdf"], width: 100, format: "png" } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ objectId: ids["doc.pdf"], width: 100, contentType: "image/png" });
      const image = (result.content as { type: string; data?: string; mimeType?: string }[]).find((c) => c.type === "image")!;
      expect(image.mimeType).toBe("image/png");
      expect((await sharp(Buffer.from(image.data!, "base64")).metadata()).width).toBe(100);
    } finally {
      await client.close();
    }
  });
});

describe("facts in info", () => {
  test("every kind: the SHA-256 of its bytes, a ThumbHash and a dominant colour", async () => {
    const bytes = await png(64, 64);
    const obj = await upload(org.admin, bucket.id, "facts/hash.png", bytes, { contentType: "image/png" });
    const view = await settled(obj.id);
    expect(view.info.sha256).toBe(sha256(bytes));
    expect(view.info.placeholder.color).toMatch(/^#[0-9a-f]{6}$/);
    const average = thumbHashToAverageRGBA(Buffer.from(view.info.placeholder.thumbhash, "base64"));
    expect(average.a).toBeCloseTo(1, 1);
    for (const id of [ids["clip.mp4"], ids["doc.pdf"], ids["tone.mp3"]]) {
      const v = (await org.admin.get(`/api/media/${id}`)).body;
      expect(v.info.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(v.info.placeholder.thumbhash.length).toBeGreaterThan(10);
    }
  });
  test("image: dimensions and EXIF with the GPS position", async () => {
    const v = (await org.admin.get(`/api/media/${ids["geo.jpg"]}`)).body;
    expect(v.info).toMatchObject({ width: 400, height: 300, format: "jpeg", exif: { make: "GeoCam", model: "G-1", iso: 100, takenAt: "2023-07-14T09:30:00" } });
    expect(v.info.exif.gps.latitude).toBeCloseTo(48.858306, 5);
    expect(v.info.exif.gps.longitude).toBeCloseTo(2.294444, 5);
  });
  test("video: codec, duration, bit rate, frame rate, poster time; audio: codec, channels, sample rate, tags; PDF: pages, title", async () => {
    const video = (await org.admin.get(`/api/media/${ids["clip.mp4"]}`)).body;
    expect(video.info).toMatchObject({ width: 320, height: 240, videoCodec: "h264", frameRate: 25, duration: 3 });
    expect(video.info.bitRate).toBeGreaterThan(0);
    expect(video.info.posterAt).toBeGreaterThanOrEqual(1);
    const audio = (await org.admin.get(`/api/media/${ids["tone.mp3"]}`)).body;
    expect(audio.info).toMatchObject({ audioCodec: "mp3", channels: 1, sampleRate: 44100, title: "Tone", artist: "Test Signal" });
    expect(audio.info.bitRate).toBeGreaterThan(0);
    const doc = (await org.admin.get(`/api/media/${ids["doc.pdf"]}`)).body;
    expect(doc.info).toMatchObject({ pages: 2, pageWidth: 612, pageHeight: 792, title: "Quarterly", author: "Finance" });
  });
  test("the organization's stripLocation setting: renders keep the camera, the position only when allowed", async () => {
    const exifOf = async (r: { bytes: Buffer }) => parseExif((await sharp(r.bytes).metadata()).exif);
    expect((await org.admin.get("/api/media-settings")).body).toMatchObject({ stripLocation: true, ocrOnUpload: false });
    const stripped = await exifOf(await render(ids["geo.jpg"]!, { width: 100, format: "jpeg" }));
    expect(stripped.make).toBe("GeoCam");
    expect(stripped.gps).toBeUndefined();
    expect((await org.admin.put("/api/media-settings", { stripLocation: false })).body).toMatchObject({ stripLocation: false });
    try {
      const kept = await exifOf(await render(ids["geo.jpg"]!, { width: 100, format: "jpeg" }));
      expect(kept.gps?.latitude).toBeCloseTo(48.858306, 5);
    } finally {
      await org.admin.put("/api/media-settings", { stripLocation: true });
    }
    // thumbnails never carry metadata
    const thumb = await fetch(`${server.url}/api/media/${ids["geo.jpg"]}/thumbnail`, { headers: { authorization: `Bearer ${org.adminKey.secret}` } });
    expect((await sharp(Buffer.from(await thumb.arrayBuffer())).metadata()).exif).toBeUndefined();
    // only admins change settings
    const reader = await org.keyClient(["read", "write"]);
    expect((await reader.put("/api/media-settings", { stripLocation: false })).status).toBe(403);
  });
});

describe("list filters on facts", () => {
  test("duplicates: objects with the same bytes, by hash or by one of them", async () => {
    const bytes = await png(50, 70);
    const a = await upload(org.admin, bucket.id, "dup/a.png", bytes, { contentType: "image/png" });
    const b = await upload(org.admin, bucket.id, "dup/b.png", bytes, { contentType: "image/png" });
    await upload(org.admin, bucket.id, "dup/c.png", await png(51, 70), { contentType: "image/png" });
    await Promise.all([settled(a.id), settled(b.id)]);
    const dupes = await org.admin.get(`/api/media?duplicatesOf=${a.id}`);
    expect(dupes.body.data.map((o: { id: string }) => o.id)).toEqual([b.id]);
    expect(dupes.body.total).toBe(1);
    const byHash = await org.admin.get(`/api/media?sha256=${sha256(bytes)}&sort=key&order=asc`);
    expect(byHash.body.data.map((o: { key: string }) => o.key)).toEqual(["dup/a.png", "dup/b.png"]);
    expect((await other.admin.get(`/api/media?duplicatesOf=${a.id}`)).status).toBe(404);
  });
  test("taken-at range, minimum width, duration range", async () => {
    const shot = await upload(org.admin, bucket.id, "when/video.mp4", await mp4(4, "640x360", { creation_time: "2022-03-04T05:06:07Z" }), { contentType: "video/mp4" });
    await settled(shot.id);
    const keys = async (q: string) => ((await org.admin.get(`/api/media?bucketId=${bucket.id}&sort=key&order=asc&limit=100&${q}`)).body.data as { key: string }[]).map((o) => o.key);
    expect(await keys("takenAfter=2023-07-14&takenBefore=2023-07-14")).toEqual(["geo.jpg"]);
    expect(await keys("takenBefore=2022-12-31")).toEqual(["when/video.mp4"]);
    expect(await keys("takenAfter=2023-07-15")).toEqual([]);
    expect(await keys("minWidth=1000")).toEqual(["huge.png"]);
    expect(await keys("minDuration=3.5")).toEqual(["when/video.mp4"]);
    expect(await keys("minDuration=1.5&maxDuration=3.5")).toEqual(["clip.mp4", "tone.mp3"]);
    expect((await org.admin.get("/api/media?minDuration=5&maxDuration=1")).status).toBe(400);
    expect((await org.admin.get("/api/media?takenAfter=yesterday")).status).toBe(400);
  });
});

describe("search filters on facts", () => {
  test("the same filters narrow a full-text search (PostgreSQL backend)", async () => {
    if (server.services.deps.search.name !== "postgres") return;
    const keys = async (q: string) => ((await org.admin.get(`/api/search?q=${q}&limit=100`)).body.media as { key: string }[]).map((o) => o.key).sort();
    expect(await keys("mp4")).toEqual(["clip.mp4", "when/video.mp4"]);
    expect(await keys("mp4&minDuration=3.5")).toEqual(["when/video.mp4"]);
    expect(await keys("mp4&takenBefore=2022-12-31")).toEqual(["when/video.mp4"]);
    expect(await keys("png&minWidth=1000")).toEqual(["huge.png"]);
    const dupes = (await org.admin.get("/api/media?sha256=" + "0".repeat(64))).body.total;
    expect(dupes).toBe(0);
  });
});
