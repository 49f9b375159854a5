import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { objectPath } from "../../domain/media/storage-keys.ts";
import { cliJsonHere, removeTempConfigHomes, runCliHere } from "../support/cli.ts";
import { mcpClient, withTwoOrgs } from "../support/fixtures.ts";
import type { Api } from "../support/http.ts";
import { newBucket } from "../support/objects.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

setDefaultTimeout(120_000);

let server: TestServer;
let org: TestOrg;
let other: TestOrg;
let otherBucket: { id: string; name: string };
let mcp: Client;

withTwoOrgs({
  ready: async (made) => {
    ({ server, org, other, otherBucket } = made);
    mcp = await mcpClient(server, org.adminKey.secret);
  },
  cleanup: async () => {
    await mcp?.close();
    removeTempConfigHomes();
  },
});

/** A fresh bucket holding `keys`, each a small text object; answers the bucket and the objects' ids by key. */
async function filled(keys: string[]): Promise<{ bucketId: string; ids: Record<string, string> }> {
  const bucket = await newBucket(org, "bulk");
  const ids: Record<string, string> = {};
  for (const key of keys) ids[key] = (await upload(org.admin, bucket.id, key, `bytes of ${key}`)).id;
  return { bucketId: bucket.id, ids };
}

const tagSlugs = async (api: Api, id: string) => (await api.get(`/api/media/${id}`)).body.tags.map((t: { slug: string }) => t.slug).sort();

describe("objects_bulk_update", () => {
  test("ids: tags added by name (new ones created) and removed, categories added; unknown and foreign ids are not_found, per object", async () => {
    const { ids } = await filled(["a.txt", "b.txt"]);
    const cat = (await org.admin.post("/api/categories", { name: `Bulk ${crypto.randomUUID().slice(0, 6)}` })).body;
    expect((await org.admin.put(`/api/objects/${ids["a.txt"]}/tags`, { add: ["old"] })).status).toBe(200);
    const foreign = (await upload(other.admin, otherBucket.id, "theirs.txt", "theirs")).id;
    const unknown = crypto.randomUUID();

    const r = await org.admin.post("/api/media/bulk-update", {
      ids: [ids["a.txt"], ids["b.txt"], unknown, foreign],
      addTags: ["Golden Hour"],
      removeTags: ["old"],
      addCategories: [cat.name],
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ done: 2, failed: 2, remaining: 0, cursor: null });
    expect(r.body.results.map((o: { id: string; status: string }) => [o.id, o.status])).toEqual([
      [ids["a.txt"], "done"],
      [ids["b.txt"], "done"],
      [unknown, "not_found"],
      [foreign, "not_found"],
    ]);
    for (const id of [ids["a.txt"]!, ids["b.txt"]!]) {
      expect(await tagSlugs(org.admin, id)).toEqual(["golden-hour"]);
      expect((await org.admin.get(`/api/media/${id}`)).body.categories.map((c: { id: string }) => c.id)).toEqual([cat.id]);
    }
    expect(await tagSlugs(other.admin, foreign)).toEqual([]);
  });

  test("an unknown category is 404 before anything changes; no change at all is 400", async () => {
    const { ids } = await filled(["c.txt"]);
    const r = await org.admin.post("/api/media/bulk-update", { ids: [ids["c.txt"]], addTags: ["never"], addCategories: ["no-such-category"] });
    expect(r.status).toBe(404);
    expect(await tagSlugs(org.admin, ids["c.txt"]!)).toEqual([]);
    const none = await org.admin.post("/api/media/bulk-update", { ids: [ids["c.txt"]] });
    expect(none.status).toBe(400);
    const both = await org.admin.post("/api/media/bulk-update", { ids: [ids["c.txt"]], filter: {}, addTags: ["x"] });
    expect(both.status).toBe(400);
    const badPrefix = await org.admin.post("/api/media/bulk-update", { ids: [ids["c.txt"]], moveTo: { prefix: "/abs/" } });
    expect([badPrefix.status, badPrefix.body.error.details[0].path]).toEqual([400, "moveTo.prefix"]);
  });

  test("a filter is walked with a cursor to its end, even as the change moves its objects out of it", async () => {
    const keys = ["inbox/1.txt", "inbox/2.txt", "inbox/3.txt", "inbox/4.txt", "inbox/5.txt", "keep/6.txt"];
    const { bucketId, ids } = await filled(keys);
    const seen: string[] = [];
    let cursor: string | null | undefined;
    let calls = 0;
    do {
      const r = await org.admin.post("/api/media/bulk-update", { filter: { bucketId, prefix: "inbox/" }, limit: 2, moveTo: { prefix: "archive/" }, ...(cursor ? { cursor } : {}) });
      expect(r.status).toBe(200);
      expect(r.body.failed).toBe(0);
      seen.push(...r.body.results.map((o: { id: string }) => o.id));
      if (r.body.cursor) expect(r.body.remaining).toBe(5 - seen.length);
      cursor = r.body.cursor;
      calls++;
    } while (cursor && calls < 10);
    expect(calls).toBe(3);
    expect(seen.sort()).toEqual(keys.slice(0, 5).map((k) => ids[k]!).sort());
    const listed = (await org.admin.get(`/api/media?bucketId=${bucketId}&sort=key&order=asc`)).body.data.map((m: { key: string }) => m.key);
    expect(listed).toEqual(["archive/1.txt", "archive/2.txt", "archive/3.txt", "archive/4.txt", "archive/5.txt", "keep/6.txt"]);
    expect(await server.services.deps.storage.head(objectPath(bucketId, "inbox/1.txt"))).toBeNull();
  });

  test("a move into another bucket: a taken key is refused for that object only, the others move", async () => {
    const { ids } = await filled(["x/one.txt", "x/two.txt"]);
    const to = await newBucket(org, "into");
    await upload(org.admin, to.id, "two.txt", "already here");
    const r = await org.admin.post("/api/media/bulk-update", { ids: [ids["x/one.txt"], ids["x/two.txt"]], moveTo: { bucketId: to.id, prefix: "" }, addTags: ["moved"] });
    expect(r.status).toBe(200);
    expect(r.body.results).toEqual([
      { id: ids["x/one.txt"], status: "done", key: "one.txt" },
      { id: ids["x/two.txt"], status: "refused", code: "conflict", message: expect.any(String) },
    ]);
    // The refused object is as it was: neither moved nor tagged.
    expect((await org.admin.get(`/api/media/${ids["x/two.txt"]}`)).body).toMatchObject({ key: "x/two.txt", tags: [] });
    expect((await org.admin.get(`/api/media/${ids["x/one.txt"]}`)).body).toMatchObject({ bucketId: to.id, key: "one.txt" });
    expect(await tagSlugs(org.admin, ids["x/one.txt"]!)).toEqual(["moved"]);
  });

  test("a move and a label change of one object are one: labels the object cannot take leave it unmoved", async () => {
    const { bucketId, ids } = await filled(["full/one.txt"]);
    const id = ids["full/one.txt"]!;
    const hundred = Array.from({ length: 100 }, (_, i) => `t${i}`);
    expect((await org.admin.put(`/api/objects/${id}/tags`, { add: hundred })).status).toBe(200);
    const r = await org.admin.post("/api/media/bulk-update", { ids: [id], moveTo: { prefix: "elsewhere/" }, addTags: ["one-too-many"] });
    expect(r.body.results).toEqual([{ id, status: "refused", code: "validation_error", message: expect.any(String) }]);
    expect((await org.admin.get(`/api/media/${id}`)).body.key).toBe("full/one.txt");
    expect(await server.services.deps.storage.head(objectPath(bucketId, "elsewhere/one.txt"))).toBeNull();
    expect(await server.services.deps.storage.head(objectPath(bucketId, "full/one.txt"))).not.toBeNull();
  });

  test("scopes and reach: a read key is refused, a one-bucket key cannot reach or move into another bucket", async () => {
    const { bucketId, ids } = await filled(["r.txt"]);
    const elsewhere = await newBucket(org, "elsewhere");
    const reader = await org.keyClient(["read"]);
    expect((await reader.post("/api/media/bulk-update", { ids: [ids["r.txt"]], addTags: ["x"] })).status).toBe(403);
    const oneBucket = await org.keyClient(["write"], { bucketId });
    expect((await oneBucket.post("/api/media/bulk-update", { filter: { bucketId: elsewhere.id }, addTags: ["x"] })).status).toBe(403);
    expect((await oneBucket.post("/api/media/bulk-update", { ids: [ids["r.txt"]], moveTo: { bucketId: elsewhere.id } })).status).toBe(403);
    // An empty filter means every object the key may see: its own bucket's.
    const own = await oneBucket.post("/api/media/bulk-update", { filter: {}, addTags: ["mine"] });
    expect(own.body).toMatchObject({ done: 1, results: [{ id: ids["r.txt"], status: "done" }] });
  });
});

describe("objects_bulk_delete", () => {
  test("ids go to the trash like single deletes; a retry with the same Idempotency-Key replays the answer", async () => {
    const { bucketId, ids } = await filled(["d1.txt", "d2.txt", "d3.txt"]);
    const headers = { "idempotency-key": crypto.randomUUID() };
    const body = { ids: [ids["d1.txt"], ids["d2.txt"]] };
    const first = await org.admin.post("/api/media/bulk-delete", body, headers);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ done: 2, failed: 0 });
    const again = await org.admin.post("/api/media/bulk-delete", body, headers);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    // Without the key a repeat finds them gone: not_found each, nothing more deleted.
    const repeat = await org.admin.post("/api/media/bulk-delete", body);
    expect(repeat.body).toMatchObject({ done: 0, failed: 2, results: [{ status: "not_found" }, { status: "not_found" }] });
    const trash = (await org.admin.get(`/api/trash?bucketId=${bucketId}`)).body.data.map((t: { id: string }) => t.id).sort();
    expect(trash).toEqual([ids["d1.txt"], ids["d2.txt"]].sort());
    expect((await org.admin.get(`/api/media?bucketId=${bucketId}`)).body.total).toBe(1);
  });

  test("a filter deletes all it selects, a call at a time; write alone is not enough; another organization's bucket is 404", async () => {
    const { bucketId } = await filled(["f/1.txt", "f/2.txt", "f/3.txt", "g/4.txt"]);
    const writer = await org.keyClient(["read", "write"]);
    expect((await writer.post("/api/media/bulk-delete", { filter: { bucketId } })).status).toBe(403);
    expect((await other.admin.post("/api/media/bulk-delete", { filter: { bucketId } })).status).toBe(404);
    const first = await org.admin.post("/api/media/bulk-delete", { filter: { bucketId, prefix: "f/" }, limit: 2 });
    expect(first.body).toMatchObject({ done: 2, remaining: 1 });
    const rest = await org.admin.post("/api/media/bulk-delete", { filter: { bucketId, prefix: "f/" }, cursor: first.body.cursor });
    expect(rest.body).toMatchObject({ done: 1, remaining: 0, cursor: null });
    const left = (await org.admin.get(`/api/media?bucketId=${bucketId}`)).body.data.map((m: { key: string }) => m.key);
    expect(left).toEqual(["g/4.txt"]);
  });
});

describe("bulk over MCP and the CLI", () => {
  test("MCP: objects_bulk_update and objects_bulk_delete answer per object", async () => {
    const { ids } = await filled(["m1.txt", "m2.txt"]);
    const tagged = await mcp.callTool({ name: "objects_bulk_update", arguments: { ids: Object.values(ids), addTags: ["via-mcp"] } });
    expect(tagged.isError).toBeFalsy();
    expect(tagged.structuredContent).toMatchObject({ done: 2, failed: 0 });
    const deleted = await mcp.callTool({ name: "objects_bulk_delete", arguments: { ids: [ids["m1.txt"]] } });
    expect(deleted.structuredContent).toMatchObject({ done: 1, results: [{ id: ids["m1.txt"], status: "done" }] });
  });

  test("CLI: media objects bulk-update and bulk-delete", async () => {
    const { bucketId, ids } = await filled(["c1.txt", "c2.txt"]);
    const base = { url: server.url, key: org.adminKey.secret };
    const tagged = await cliJsonHere(["objects", "bulk-update", "--ids", `${ids["c1.txt"]},${ids["c2.txt"]}`, "--add-tags", "from-cli"], base);
    expect(tagged).toMatchObject({ done: 2, failed: 0 });
    const deleted = await cliJsonHere(["objects", "bulk-delete", "--filter", JSON.stringify({ bucketId }), "--limit", "10"], base);
    expect(deleted).toMatchObject({ done: 2, remaining: 0 });
    const reader = await org.keyClient(["read"]);
    const refused = await runCliHere(["objects", "bulk-delete", "--ids", ids["c1.txt"]!], { url: server.url, key: reader.secret });
    expect(refused.code).not.toBe(0);
  });
});
