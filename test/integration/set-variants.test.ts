import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import { dimensions, mp4, png } from "../support/media-files.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/** Set variants end to end: the worker renders each generated item from the base object. */
let server: TestServer;
let org: TestOrg;
let bucket: string;

beforeAll(async () => {
  server = await startServer();
  org = await newOrg(server);
  bucket = (await org.admin.post("/api/buckets", { name: "variants" })).body.id;
});
afterAll(() => server.stop());

const ITEMS = [
  { aspectRatio: "1:1", width: 300, height: 300, role: "square" },
  { aspectRatio: "16:9", width: 640, height: 360, role: "hero" },
  { aspectRatio: "9:16", width: 180, height: 320, role: "story" },
];

async function setWithItems(baseObjectId: string) {
  const set = (await org.admin.post("/api/sets", { name: "renditions", baseObjectId })).body;
  for (const item of ITEMS) expect((await org.admin.post(`/api/sets/${set.id}/items`, item)).status).toBe(201);
  return set.id as string;
}

/** Waits until every generated item has a rendition, then checks each one's pixels. */
async function renditionsOf(setId: string) {
  const set = await eventually(async () => {
    const s = (await org.admin.get(`/api/sets/${setId}`)).body;
    return s.items.every((i: { objectId: string | null }) => i.objectId) ? s : undefined;
  }, { timeoutMs: WAIT_CEILING_MS, what: "every item to have a rendition" });
  const out = [];
  for (const item of set.items) {
    const dl = await org.admin.post("/api/presign/download", { objectId: item.objectId });
    const bytes = new Uint8Array(await (await fetch(dl.body.url)).arrayBuffer());
    out.push({ item, object: (await org.admin.get(`/api/media/${item.objectId}`)).body, size: await dimensions(bytes) });
  }
  return out;
}

describe("POST /api/sets/{id}/generate renders the items", () => {
  test("an image base: every item at its exact size, stored as a media object in the base's bucket", async () => {
    const base = await upload(org.admin, bucket, "photos/base.png", await png(800, 600), { contentType: "image/png" });
    const setId = await setWithItems(base.id);
    expect((await org.admin.post(`/api/sets/${setId}/generate`)).status).toBe(202);
    const first = await renditionsOf(setId);
    for (const { item, object, size } of first) {
      expect(size).toMatchObject({ width: item.width, height: item.height, format: "webp" });
      expect(object).toMatchObject({ bucketId: bucket, kind: "image", contentType: "image/webp" });
      expect(item.source).toBe("generated");
    }
    // Regenerating replaces: the same objects, no new ones.
    const before = (await org.admin.get(`/api/media?bucketId=${bucket}&limit=200`)).body.total;
    expect((await org.admin.post(`/api/sets/${setId}/generate`)).status).toBe(202);
    await Bun.sleep(300);
    const again = await renditionsOf(setId);
    expect(again.map((r) => r.item.objectId).sort()).toEqual(first.map((r) => r.item.objectId).sort());
    await eventually(async () => ((await org.admin.get(`/api/media?bucketId=${bucket}&limit=200`)).body.total === before ? true : undefined));
  }, 3 * WAIT_CEILING_MS);

  test("a video base is rendered from its poster frame", async () => {
    const base = await upload(org.admin, bucket, "clips/base.mp4", await mp4(2, "640x480"), { contentType: "video/mp4" });
    const setId = await setWithItems(base.id);
    expect((await org.admin.post(`/api/sets/${setId}/generate`)).status).toBe(202);
    for (const { item, size } of await renditionsOf(setId)) expect(size).toMatchObject({ width: item.width, height: item.height });
  }, 3 * WAIT_CEILING_MS);

  test("attached items are left alone; a base that cannot be rendered is 409", async () => {
    const base = await upload(org.admin, bucket, "photos/attached-base.png", await png(400, 400), { contentType: "image/png" });
    const own = await upload(org.admin, bucket, "photos/own.png", await png(100, 100), { contentType: "image/png" });
    const set = (await org.admin.post("/api/sets", { name: "mixed", baseObjectId: base.id })).body;
    await org.admin.post(`/api/sets/${set.id}/items`, { objectId: own.id, aspectRatio: "1:1", width: 100, height: 100, role: "mine" });
    await org.admin.post(`/api/sets/${set.id}/items`, { aspectRatio: "1:1", width: 50, height: 50, role: "small" });
    expect((await org.admin.post(`/api/sets/${set.id}/generate`)).status).toBe(202);
    const done = await eventually(async () => {
      const s = (await org.admin.get(`/api/sets/${set.id}`)).body;
      return s.items.every((i: { objectId: string | null }) => i.objectId) ? s : undefined;
    }, { timeoutMs: WAIT_CEILING_MS });
    expect(done.items.find((i: { role: string }) => i.role === "mine").objectId).toBe(own.id);

    const audio = await upload(org.admin, bucket, "sound/a.mp3", "not really audio", { contentType: "audio/mpeg" });
    const audioSet = (await org.admin.post("/api/sets", { name: "audio", baseObjectId: audio.id })).body;
    const res = await org.admin.post(`/api/sets/${audioSet.id}/generate`);
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/images, videos/);
  }, 3 * WAIT_CEILING_MS);
});
