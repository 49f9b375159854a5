import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mediaObjects } from "../../db/schema/index.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

let server: TestServer;
let org: TestOrg;
let other: TestOrg;

beforeAll(async () => {
  server = await startServer();
  org = await newOrg(server);
  other = await newOrg(server);
});
afterAll(() => server.stop());

describe("buckets", () => {
  test("create answers 201 with id, name and createdAt", async () => {
    const res = await org.admin.post("/api/buckets", { name: "photos" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: "photos", createdAt: expect.any(String) });
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
  });

  test("names are unique per organization, not across organizations", async () => {
    expect((await org.admin.post("/api/buckets", { name: "dup" })).status).toBe(201);
    const again = await org.admin.post("/api/buckets", { name: "dup" });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("conflict");
    expect((await other.admin.post("/api/buckets", { name: "dup" })).status).toBe(201);
  });

  test("invalid names are 400 with details", async () => {
    for (const name of ["", "-lead", "has space", "x".repeat(64), 42]) {
      const res = await org.admin.post("/api/buckets", { name });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].path).toBe("name");
    }
  });

  test("list is paginated with total and hasMore", async () => {
    for (const n of ["p1", "p2", "p3"]) await org.admin.post("/api/buckets", { name: n });
    const all = await org.admin.get("/api/buckets");
    expect(all.status).toBe(200);
    const total = all.body.total;
    expect(all.body.data).toHaveLength(total);
    expect(all.body.hasMore).toBe(false);
    const first = await org.admin.get("/api/buckets?limit=2&offset=0");
    expect(first.body.data).toHaveLength(2);
    expect(first.body.hasMore).toBe(true);
    const last = await org.admin.get(`/api/buckets?limit=2&offset=${total - 1}`);
    expect(last.body.data).toHaveLength(1);
    expect(last.body.hasMore).toBe(false);
    expect(first.body.data[0].id).toBe(all.body.data[0].id);
    for (const q of ["limit=0", "limit=201", "offset=-1", "limit=abc", "sort=name"]) {
      expect((await org.admin.get(`/api/buckets?${q}`)).status).toBe(400);
    }
    const theirs = await other.admin.get("/api/buckets");
    const mine = new Set(all.body.data.map((b: { id: string }) => b.id));
    expect(theirs.body.data.some((b: { id: string }) => mine.has(b.id))).toBe(false);
  });

  test("get by id; another organization's bucket is 404", async () => {
    const b = (await org.admin.post("/api/buckets", { name: "g" })).body;
    expect((await org.admin.get(`/api/buckets/${b.id}`)).body).toEqual(b);
    const res = await other.admin.get(`/api/buckets/${b.id}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    expect((await org.admin.get(`/api/buckets/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await org.admin.get("/api/buckets/not-a-uuid")).status).toBe(400);
  });

  test("delete an empty bucket; then it is gone", async () => {
    const b = (await org.admin.post("/api/buckets", { name: "gone" })).body;
    expect((await other.admin.delete(`/api/buckets/${b.id}`)).status).toBe(404);
    const res = await org.admin.delete(`/api/buckets/${b.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: b.id, deleted: true });
    expect((await org.admin.get(`/api/buckets/${b.id}`)).status).toBe(404);
    expect((await org.admin.delete(`/api/buckets/${b.id}`)).status).toBe(404);
  });

  test("deleting a bucket that holds live objects is 409; soft-deleted objects do not count", async () => {
    const b = (await org.admin.post("/api/buckets", { name: "full" })).body;
    const [obj] = await server.services.deps.db
      .insert(mediaObjects)
      .values({ orgId: org.orgId, bucketId: b.id, key: "a.png", size: 10, contentType: "image/png", kind: "image" })
      .returning();
    const res = await org.admin.delete(`/api/buckets/${b.id}`);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("conflict");
    expect((await org.admin.get(`/api/buckets/${b.id}`)).status).toBe(200);
    const { eq } = await import("drizzle-orm");
    await server.services.deps.db.update(mediaObjects).set({ deletedAt: new Date() }).where(eq(mediaObjects.id, obj!.id));
    expect((await org.admin.delete(`/api/buckets/${b.id}`)).status).toBe(200);
  });

  test("a bucket-restricted key sees and acts only on its bucket", async () => {
    const b1 = (await org.admin.post("/api/buckets", { name: "only" })).body;
    const b2 = (await org.admin.post("/api/buckets", { name: "notmine" })).body;
    const key = await org.keyClient(["read", "write", "delete"], { bucketId: b1.id });
    const list = await key.get("/api/buckets");
    expect(list.body.data.map((b: { id: string }) => b.id)).toEqual([b1.id]);
    expect(list.body.total).toBe(1);
    expect((await key.get(`/api/buckets/${b1.id}`)).status).toBe(200);
    const res = await key.get(`/api/buckets/${b2.id}`);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
    expect((await key.post("/api/buckets", { name: "new" })).status).toBe(403);
    expect((await key.delete(`/api/buckets/${b2.id}`)).status).toBe(403);
    expect((await key.delete(`/api/buckets/${b1.id}`)).status).toBe(403);
    expect((await org.admin.get(`/api/buckets/${b1.id}`)).status).toBe(200);
  });
});
