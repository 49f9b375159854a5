import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { derivatives } from "../../db/schema/index.ts";
import { testEnv } from "../support/env.ts";
import { eventually, WAIT_CEILING_MS } from "../support/eventually.ts";
import { png } from "../support/media-files.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/** media_list's folder view (key prefixes) and the signed thumbnail paths a listing carries. */
const LIMIT = 100;
let server: TestServer;
let org: TestOrg;
let other: TestOrg;
let bucketId: string;

beforeAll(async () => {
  // A low per-minute limit: thumbnails fetched by their signed paths must not count against it.
  server = await startServer({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT), REDIS_PREFIX: `${testEnv.redisPrefix}-folders-${crypto.randomUUID()}` } });
  org = await newOrg(server);
  other = await newOrg(server);
  bucketId = (await org.admin.post("/api/buckets", { name: "folders" })).body.id;
  for (const key of ["top.txt", "a/one.txt", "a/b/two.txt", "a/b/c/three.txt", "a%/x.txt", "a_b/y.txt", "z/zz.txt"]) await upload(org.admin, bucketId, key, key);
});
afterAll(() => server.stop());

const db = () => server.services.deps.db;
const list = (query: string) => org.admin.get(`/api/media?bucketId=${bucketId}&sort=key&order=asc&${query}`);

describe("folders", () => {
  test("the top: its own objects and its subfolders, sorted", async () => {
    const res = await list("folder=");
    expect(res.status).toBe(200);
    expect(res.body.data.map((o: { key: string }) => o.key)).toEqual(["top.txt"]);
    expect(res.body.total).toBe(1);
    expect(res.body.folders).toEqual(["a", "a%", "a_b", "z"]);
  });

  test("a folder: only what is directly in it; LIKE's wildcards in a folder mean themselves", async () => {
    const a = await list(`folder=${encodeURIComponent("a/")}`);
    expect(a.body.data.map((o: { key: string }) => o.key)).toEqual(["a/one.txt"]);
    expect(a.body.folders).toEqual(["b"]);
    const pct = await list(`folder=${encodeURIComponent("a%/")}`);
    expect(pct.body.data.map((o: { key: string }) => o.key)).toEqual(["a%/x.txt"]);
    expect(pct.body.folders).toEqual([]);
    const b = await list(`folder=${encodeURIComponent("a/b/")}&search=two`);
    expect(b.body.data.map((o: { key: string }) => o.key)).toEqual(["a/b/two.txt"]);
  });

  test("a folder not ending in / is a 400; without folder the listing has no folders", async () => {
    const bad = await list("folder=a");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_error");
    const flat = await list("");
    expect(flat.status).toBe(200);
    expect(flat.body.data.length).toBeGreaterThanOrEqual(7);
    expect(flat.body.folders).toBeUndefined();
  });

  test("another organization's bucket is 404 with a folder too", async () => {
    const res = await other.admin.get(`/api/media?bucketId=${bucketId}&folder=a%2F`);
    expect(res.status).toBe(404);
  });
});

describe("signed thumbnail paths", () => {
  test("a listing's ready thumbnails carry a path that serves them with no credential and no rate limit", async () => {
    const pic = await upload(org.admin, bucketId, "pics/p.png", await png(64, 48), { contentType: "image/png" });
    // Waited for in the database: polling the API would spend the budget this test measures.
    await eventually(
      async () => {
        const [t] = await db().select().from(derivatives).where(eq(derivatives.objectId, pic.id));
        return t?.state === "ready" ? t : undefined;
      },
      { timeoutMs: WAIT_CEILING_MS, what: "the thumbnail" },
    );
    const reader = await org.keyClient(["read"]);
    const res = await reader.get(`/api/media?bucketId=${bucketId}&folder=pics%2F`);
    const listed = res.body.data.find((x: { id: string }) => x.id === pic.id);
    expect(listed.thumbnail.path).toStartWith(`/api/thumbnails/${pic.id}?v=${listed.thumbnail.etag}&`);
    // Twice the per-minute limit of fetches, none with a credential: all answered.
    const statuses = new Set<number>();
    for (let i = 0; i < LIMIT * 2; i++) {
      const res = await fetch(`${server.url}${listed.thumbnail.path}`);
      statuses.add(res.status);
      if (i === 0) {
        expect(res.headers.get("content-type")).toBe(listed.thumbnail.contentType);
        expect(res.headers.get("cache-control")).toContain("immutable");
      }
      await res.arrayBuffer();
    }
    expect([...statuses]).toEqual([200]);
    // The key still has its budget: the thumbnails spent none of it.
    const after = await reader.get(`/api/media/${pic.id}`);
    expect(after.status).toBe(200);
    expect(Number(/r=(\d+)/.exec(after.headers.get("ratelimit") ?? "")?.[1])).toBeGreaterThanOrEqual(LIMIT - 2);
  });

  test("every answer with the object carries the same path, the trash's none; a value written like the path's mark comes back as written", async () => {
    // The database writes a ready thumbnail's path as a mark the service then signs
    // (domain/media/view-rows.ts): text that looks like it, in a value, is only text.
    const pic = await upload(org.admin, bucketId, "marks/m.png", await png(40, 30), { contentType: "image/png" });
    const metadata = { note: `\\u0000${pic.id}\\u0000x`, quoted: `"\\u0000${pic.id}\\u0000"`, control: "a\u0001b\u001fc" };
    expect((await org.admin.call("PUT", `/api/media/${pic.id}/metadata`, { metadata })).status).toBe(200);
    await eventually(
      async () => {
        const [t] = await db().select().from(derivatives).where(eq(derivatives.objectId, pic.id));
        return t?.state === "ready" ? t : undefined;
      },
      { timeoutMs: WAIT_CEILING_MS, what: "the thumbnail" },
    );
    const got = (await org.admin.get(`/api/media/${pic.id}`)).body;
    expect(got.metadata).toEqual(metadata);
    expect(got.thumbnail.path).toStartWith(`/api/thumbnails/${pic.id}?v=${got.thumbnail.etag}&`);
    const answers = {
      listing: (await list("limit=200")).body.data,
      folder: (await list(`folder=${encodeURIComponent("marks/")}`)).body.data,
      "key search": (await org.admin.get(`/api/media?bucketId=${bucketId}&search=marks%2Fm`)).body.data,
      "key search, kept": (await org.admin.get(`/api/media?bucketId=${bucketId}&search=marks%2Fm`)).body.data,
      search: (await org.admin.get(`/api/search?q=${encodeURIComponent("marks")}&bucketId=${bucketId}`)).body.media,
    };
    for (const [what, views] of Object.entries(answers)) expect([what, views.find((v: { id: string }) => v.id === pic.id)]).toEqual([what, got]);
    expect((await fetch(`${server.url}${got.thumbnail.path}`)).status).toBe(200);
    expect((await org.admin.call("DELETE", `/api/media/${pic.id}`)).status).toBe(200);
    const trashed = (await org.admin.get(`/api/trash?bucketId=${bucketId}`)).body.data.find((v: { id: string }) => v.id === pic.id);
    expect(trashed.metadata).toEqual(metadata);
    expect(trashed.thumbnail).toEqual({ state: "ready", width: got.thumbnail.width, height: got.thumbnail.height, contentType: got.thumbnail.contentType, etag: got.thumbnail.etag });
  });

  test("a changed signature, etag or expiry is 403; a deleted object's path stops working", async () => {
    const res = await list(`folder=${encodeURIComponent("pics/")}`);
    const path: string = res.body.data[0].thumbnail.path;
    const u = new URL(path, server.url);
    const tamper = (k: string, v: string) => {
      const t = new URL(u);
      t.searchParams.set(k, v);
      return fetch(t).then((r) => r.status);
    };
    expect(await tamper("signature", "x".repeat(43))).toBe(403);
    expect(await tamper("v", "0".repeat(32))).toBe(403);
    expect(await tamper("expires", String(Number(u.searchParams.get("expires")) + 86_400))).toBe(403);
    expect((await fetch(new URL(path.replace(/thumbnails\/[^?]+/, `thumbnails/${crypto.randomUUID()}`), server.url))).status).toBe(403);
    expect((await org.admin.call("DELETE", `/api/media/${res.body.data[0].id}`)).status).toBe(200);
    expect((await fetch(u)).status).toBe(403);
  });
});
