// One pass: a rebuild writes every live object of the database, and the PostgreSQL run's database is shared by every file (thousands of objects); the embedded pass gives the server a database of its own, and the rebuild's SQL is the same on both.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Logger } from "../../domain/ports/log.ts";
import { MeiliSearchBackend } from "../../search/meilisearch.ts";
import { reindex } from "../../search/reindex.ts";
import { newOrg, startServer, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * `npm run search:reindex` against the run's database and a stand-in for Meilisearch that
 * keeps the documents it is sent (no Meilisearch can be installed here; the protocol side is
 * test/unit/meilisearch-protocol.test.ts, a real server test/integration/meilisearch.test.ts).
 * A rebuild used to write every live object and leave everything else: documents of deleted
 * objects, or of objects that were never in this catalogue, stayed searchable for good.
 */
const docs = new Map<string, Record<string, unknown>>();
let nextTask = 1;
const tasks = new Map<number, string>();
let stub: ReturnType<typeof Bun.serve>;
let server: TestServer;
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

beforeAll(async () => {
  stub = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body = req.method === "GET" ? null : await req.json().catch(() => null);
      const enqueue = (type: string) => {
        const taskUid = nextTask++;
        tasks.set(taskUid, type);
        return Response.json({ taskUid, indexUid: "x", status: "enqueued", type, enqueuedAt: new Date().toISOString() }, { status: 202 });
      };
      const task = url.pathname.match(/^\/tasks\/(\d+)$/);
      if (task) {
        const uid = Number(task[1]);
        const now = new Date().toISOString();
        return Response.json({ uid, batchUid: uid, indexUid: "x", status: "succeeded", type: tasks.get(uid), canceledBy: null, details: {}, error: null, duration: "PT0S", enqueuedAt: now, startedAt: now, finishedAt: now });
      }
      if (req.method === "POST" && url.pathname === "/indexes") return enqueue("indexCreation");
      if (url.pathname.endsWith("/settings")) return enqueue("settingsUpdate");
      if (url.pathname.endsWith("/documents/delete-batch")) {
        for (const id of body as string[]) docs.delete(String(id));
        return enqueue("documentDeletion");
      }
      if (url.pathname.endsWith("/documents") && req.method === "POST") {
        for (const d of body as Record<string, unknown>[]) docs.set(String(d.id), d);
        return enqueue("documentAdditionOrUpdate");
      }
      if (url.pathname.endsWith("/documents") && req.method === "GET") {
        const limit = Number(url.searchParams.get("limit") ?? 20);
        const offset = Number(url.searchParams.get("offset") ?? 0);
        const all = [...docs.values()].sort((a, b) => String(a.id).localeCompare(String(b.id)));
        return Response.json({ results: all.slice(offset, offset + limit).map((d) => ({ id: d.id })), offset, limit, total: all.length });
      }
      return new Response("not found", { status: 404 });
    },
  });
  server = await startServer();
});
afterAll(async () => {
  stub?.stop(true);
  await server?.stop();
});

describe("search:reindex", () => {
  test("writes every live object and removes the documents of objects the catalogue does not have live", async () => {
    const org = await newOrg(server);
    const bucket = (await org.admin.post("/api/buckets", { name: "reindexed" })).body;
    const kept = await upload(org.admin, bucket.id, "kept.txt", "kept");
    const deleted = await upload(org.admin, bucket.id, "deleted.txt", "deleted");
    expect((await org.admin.delete(`/api/media/${deleted.id}`)).status).toBe(200);
    // What an index can hold that the catalogue does not: a deleted object's document whose
    // removal was lost, an object of another catalogue, something that is no id of ours.
    const foreign = crypto.randomUUID();
    for (const id of [deleted.id, foreign, "not-an-object"]) docs.set(id, { id });

    const backend = new MeiliSearchBackend({ url: stub.url.origin, key: null, indexPrefix: "reindex", exactUpTo: 10_000 }, server.services.deps.db, quiet);
    // Small pages, so the removal crosses page boundaries.
    const prune = backend.prune.bind(backend);
    backend.prune = () => prune(2);
    const result = await reindex(server.services.deps.db, backend, quiet);

    expect(docs.has(kept.id)).toBe(true);
    expect(docs.get(kept.id)).toMatchObject({ key: "kept.txt", bucketId: bucket.id });
    for (const id of [deleted.id, foreign, "not-an-object"]) expect(docs.has(id)).toBe(false);
    expect(result).toEqual({ written: docs.size, removed: 3 });
  });
});
