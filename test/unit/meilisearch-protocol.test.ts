import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Db } from "../../db/client.ts";
import type { Logger } from "../../domain/ports/log.ts";
import { parseQuery } from "../../domain/search/query.ts";
import { MeiliSearchBackend } from "../../search/meilisearch.ts";
import type { MeiliDoc } from "../../search/meili-translate.ts";

/**
 * The Meilisearch backend's use of the task API, against a stub that speaks it: no
 * Meilisearch binary can be installed here (npm has clients only). What is checked is our
 * side of the protocol: that a task's final status is read, that settings go before writes
 * and again after a failure, and how a search answer is read. The behaviour of a real
 * server is test/integration/meilisearch.test.ts's (MEILISEARCH_URL).
 */
interface Seen {
  method: string;
  path: string;
  body: unknown;
}
let seen: Seen[] = [];
/** Final status per task type ("indexCreation", "settingsUpdate", "documentAdditionOrUpdate", ...). */
let outcome: Record<string, { status: "succeeded" | "failed"; code?: string }> = {};
let searchAnswers: Array<{ status: number; body: unknown }> = [];
let down = false;
const tasks = new Map<number, { type: string; indexUid: string }>();
let nextTask = 1;

let stub: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  stub = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (down) return new Response("down", { status: 503 });
      const text = await req.text();
      const body = text ? JSON.parse(text) : null;
      seen.push({ method: req.method, path: url.pathname, body });
      const enqueue = (type: string, indexUid: string) => {
        const taskUid = nextTask++;
        tasks.set(taskUid, { type, indexUid });
        return Response.json({ taskUid, indexUid, status: "enqueued", type, enqueuedAt: new Date().toISOString() }, { status: 202 });
      };
      const task = url.pathname.match(/^\/tasks\/(\d+)$/);
      if (task) {
        const uid = Number(task[1]);
        const t = tasks.get(uid)!;
        const o = outcome[t.type] ?? { status: "succeeded" };
        return Response.json({
          uid,
          batchUid: uid,
          indexUid: t.indexUid,
          status: o.status,
          type: t.type,
          canceledBy: null,
          details: {},
          error: o.status === "failed" ? { message: `stub: ${o.code}`, code: o.code, type: "invalid_request", link: "" } : null,
          duration: "PT0S",
          enqueuedAt: new Date().toISOString(),
          startedAt: new Date().toISOString(),
          finishedAt: new Date().toISOString(),
        });
      }
      if (req.method === "POST" && url.pathname === "/indexes") return enqueue("indexCreation", body.uid);
      const idx = url.pathname.match(/^\/indexes\/([^/]+)\/(settings|documents|documents\/delete-batch|search)$/);
      if (idx) {
        const [, uid, what] = idx;
        if (what === "settings") return enqueue("settingsUpdate", uid!);
        if (what === "documents") return enqueue("documentAdditionOrUpdate", uid!);
        if (what === "documents/delete-batch") return enqueue("documentDeletion", uid!);
        const answer = searchAnswers.shift() ?? { status: 200, body: { hits: [], totalHits: 0, totalPages: 0, page: 1, hitsPerPage: 20, processingTimeMs: 0, query: "" } };
        return Response.json(answer.body, { status: answer.status });
      }
      return new Response("not found", { status: 404 });
    },
  });
});
afterAll(() => stub.stop(true));
beforeEach(() => {
  seen = [];
  outcome = {};
  searchAnswers = [];
  down = false;
});

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
/** Facet names are looked up in the database only when facets come back; these tests return none. */
const noDb = null as unknown as Db;
const backend = (exactUpTo = 10_000) => new MeiliSearchBackend({ url: stub.url.origin, key: null, indexPrefix: "t", exactUpTo }, noDb, quiet);
const doc = (id: string): MeiliDoc => ({
  id,
  orgId: "o",
  bucketId: "b",
  key: "a.jpg",
  keyWords: "a jpg",
  text: "",
  fileName: "a.jpg",
  labels: "",
  meta: "",
  tagIds: [],
  categoryIds: [],
  kind: "image",
  size: 1,
  createdAt: 0,
});
const request = (over: { limit?: number; offset?: number } = {}) => ({
  orgId: "11111111-1111-4111-8111-111111111111",
  query: parseQuery("sunset"),
  bucketId: null,
  kind: null,
  tagIds: [],
  categoryGroups: [],
  sizeMin: null,
  sizeMax: null,
  dateFrom: null,
  dateBefore: null,
  limit: over.limit ?? 20,
  offset: over.offset ?? 0,
  exactUpTo: 10_000,
});
const calls = () => seen.filter((s) => !s.path.startsWith("/tasks/")).map((s) => `${s.method} ${s.path}`);

describe("Meilisearch task protocol (stub server)", () => {
  test("settings go before the first batch's documents: the index is created (an existing one is fine) and its settings sort facet values by count", async () => {
    outcome.indexCreation = { status: "failed", code: "index_already_exists" };
    const b = backend(500);
    await b.write([doc("1")], ["2"]);
    expect(calls()).toEqual(["POST /indexes", "PATCH /indexes/t_media/settings", "POST /indexes/t_media/documents", "POST /indexes/t_media/documents/delete-batch"]);
    const settings = seen.find((s) => s.method === "PATCH")!.body as Record<string, any>;
    expect(settings.faceting).toEqual({ maxValuesPerFacet: 100, sortFacetValuesBy: { "*": "count" } });
    expect(settings.pagination).toEqual({ maxTotalHits: 501 });
    // Applied once while they hold: the next batch writes only.
    seen = [];
    await b.write([doc("3")], []);
    expect(calls()).toEqual(["POST /indexes/t_media/documents"]);
  });

  test("a failed task throws (so the sync job is retried, not marked done), and the retry applies the settings again", async () => {
    const b = backend();
    await b.write([doc("1")], []);
    outcome.documentAdditionOrUpdate = { status: "failed", code: "invalid_document_id" };
    await expect(b.write([doc("2")], [])).rejects.toThrow(/add documents: task \d+ failed \(invalid_document_id/);
    outcome = {};
    seen = [];
    await b.write([doc("2")], []);
    expect(calls()).toEqual(["POST /indexes", "PATCH /indexes/t_media/settings", "POST /indexes/t_media/documents"]);
  });

  test("a failed settings task fails the batch before any document is written", async () => {
    outcome.settingsUpdate = { status: "failed", code: "invalid_settings_faceting" };
    await expect(backend().write([doc("1")], [])).rejects.toThrow(/update settings/);
    expect(calls()).not.toContain("POST /indexes/t_media/documents");
  });

  test("Meilisearch down at start: start-up goes on, and the first batch after it is back applies the settings", async () => {
    down = true;
    const b = backend();
    await b.ensureIndex(); // logs, does not throw
    await expect(b.write([doc("1")], [])).rejects.toThrow();
    down = false;
    await b.write([doc("1")], []);
    expect(calls()).toEqual(["POST /indexes", "PATCH /indexes/t_media/settings", "POST /indexes/t_media/documents"]);
  });

  test("a search on a bare index (filter not filterable) applies the settings and is answered on the retry", async () => {
    searchAnswers = [
      { status: 400, body: { message: "Attribute `orgId` is not filterable.", code: "invalid_search_filter", type: "invalid_request", link: "" } },
      { status: 200, body: { hits: [{ id: "a" }, { id: "b" }], totalHits: 2, totalPages: 1, page: 1, hitsPerPage: 20, processingTimeMs: 1, query: "sunset", facetDistribution: {} } },
    ];
    const hits = await backend().search(request());
    expect(hits).toEqual({
      ids: ["a", "b"],
      total: 2,
      totalRelation: "eq",
      facets: { tags: [], categories: [], kinds: [] },
      facetsApproximate: false,
      matches: ["a", "b"].map((id) => ({ id, in: [], page: null, snippet: null })),
    });
    expect(calls()).toEqual(["POST /indexes/t_media/search", "POST /indexes", "PATCH /indexes/t_media/settings", "POST /indexes/t_media/search"]);
  });

  test("searches use page mode (exhaustive totals and facets); past the exact limit the total is a lower bound; an unaligned offset skips the head", async () => {
    searchAnswers = [{ status: 200, body: { hits: [{ id: "a" }, { id: "b" }, { id: "c" }], totalHits: 10_001, totalPages: 1, page: 1, hitsPerPage: 3, processingTimeMs: 1, query: "sunset", facetDistribution: {} } }];
    const hits = await backend().search(request({ limit: 2, offset: 1 }));
    expect(hits.ids).toEqual(["b", "c"]);
    expect(hits.total).toBe(10_000);
    expect(hits.totalRelation).toBe("gte");
    const body = seen.find((s) => s.path.endsWith("/search"))!.body as Record<string, unknown>;
    expect(body).toMatchObject({ page: 1, hitsPerPage: 3, matchingStrategy: "all", facets: ["tagIds", "categoryIds", "kind"] });
    expect(body).not.toHaveProperty("offset");
  });
});
