import { errors } from "../domain/core/errors.ts";
import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import { type EnqueuedTaskPromise, MeilisearchApiError, Meilisearch, type Task } from "meilisearch";
import type { Db } from "../db/client.ts";
import { categories, mediaObjects, mediaText, objectFacts, tags } from "../db/schema/index.ts";
import { labelsFor } from "../domain/labels/object-labels.ts";
import { fileNameOf } from "../domain/media/kind.ts";
import type { Logger } from "../domain/ports/log.ts";
import type { SearchBackend, SearchHits, SearchRequest } from "../domain/ports/search.ts";
import { indexSettings, MATCH_REQUEST, type MeiliDoc, meiliFilter, meiliMatch, meiliPaging, meiliQuery, toFacets, totalOf } from "./meili-translate.ts";

/** Longest wait for one task (a sync batch's documents): past it the job fails and is retried. */
const TASK_TIMEOUT_MS = 60_000;

/**
 * Waits for a task and throws unless it succeeded: `waitTask` resolves with failed and
 * canceled tasks too, and a sync job that took that for success would mark its objects
 * synced when they were not. `tolerate` names error codes that mean "already so".
 */
export async function settled(task: EnqueuedTaskPromise, what: string, tolerate: string[] = []): Promise<Task> {
  const done = await task.waitTask({ timeout: TASK_TIMEOUT_MS });
  if (done.status === "succeeded") return done;
  if (done.error && tolerate.includes(done.error.code)) return done;
  throw new Error(`Meilisearch ${what}: task ${done.uid} ${done.status}${done.error ? ` (${done.error.code}: ${done.error.message})` : ""}`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Answers that mean the index is missing or lacks its settings (created bare, or by someone else). */
const SETTINGS_ERRORS = new Set(["index_not_found", "invalid_search_filter", "invalid_search_facets", "invalid_search_sort"]);

/**
 * Meilisearch behind the search port (MEILISEARCH_URL). Every document carries its
 * organization, and every search filters on it. Documents are written by `search.sync`
 * jobs from the outbox, so nothing is lost while Meilisearch is down; `npm run search:reindex`
 * rebuilds the index from the database.
 */
export class MeiliSearchBackend implements SearchBackend {
  readonly name = "meilisearch" as const;
  readonly external = true;
  private readonly client: Meilisearch;
  readonly indexUid: string;
  readonly exactUpTo: number;
  /** Settled once the index exists with our settings; cleared by any failure, so the next batch applies them again. */
  private settings: Promise<void> | null = null;

  constructor(
    opts: { url: string; key: string | null; indexPrefix: string; exactUpTo?: number },
    private readonly db: Db,
    private readonly log: Logger,
  ) {
    this.client = new Meilisearch({ host: opts.url, ...(opts.key ? { apiKey: opts.key } : {}) });
    this.indexUid = `${opts.indexPrefix.replace(/[^A-Za-z0-9_-]/g, "_")}_media`;
    this.exactUpTo = opts.exactUpTo ?? 10_000;
  }

  private get index() {
    return this.client.index<MeiliDoc>(this.indexUid);
  }

  /** Readiness: Meilisearch answers its health endpoint. */
  async ping(timeoutMs: number): Promise<void> {
    const res = await fetch(new URL("/health", this.client.config.host), { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`Meilisearch health answered ${res.status}`);
  }

  /** At start: tries once; a failure is not fatal, since every sync batch tries again. */
  async ensureIndex(): Promise<void> {
    try {
      await this.ensureSettings();
    } catch (err) {
      // Start anyway: searches retry the settings, and sync jobs apply them before writing.
      this.log.warn("meilisearch not ready; index settings will be applied by the next sync or search", { error: String(err) });
    }
  }

  /**
   * The index with our settings, applied once per process while they hold: creating an index
   * that exists and setting settings to their values are both harmless, so this is safe to
   * repeat (and is, after any failure, on every instance).
   */
  async ensureSettings(): Promise<void> {
    this.settings ??= (async () => {
      await settled(this.client.createIndex(this.indexUid, { primaryKey: "id" }), "create index", ["index_already_exists"]);
      await settled(this.index.updateSettings(indexSettings(this.exactUpTo)), "update settings");
    })().catch((err) => {
      this.settings = null;
      throw err;
    });
    await this.settings;
  }

  async search(req: SearchRequest): Promise<SearchHits> {
    // Its documents carry the dominant colour only of the worker's facts: say so rather than ignore the filter.
    if (req.facts && Object.entries(req.facts).some(([k, v]) => k !== "color" && v !== undefined)) {
      throw errors.badRequest("Filters on file facts (hash, duplicates, taken-at, size, duration) need the PostgreSQL search backend; GET /api/media has them with any backend");
    }
    const { skip, ...paging } = meiliPaging(req.limit, req.offset);
    const run = () =>
      this.index.search(meiliQuery(req.query), {
        filter: meiliFilter(req),
        facets: ["tagIds", "categoryIds", "kind"],
        attributesToRetrieve: ["id"],
        ...MATCH_REQUEST,
        attributesToHighlight: [...MATCH_REQUEST.attributesToHighlight],
        attributesToCrop: [...MATCH_REQUEST.attributesToCrop],
        matchingStrategy: "all",
        ...paging,
      });
    let res: Awaited<ReturnType<typeof run>>;
    try {
      res = await run();
    } catch (err) {
      // An index that is missing or bare (Meilisearch was down at start, or the index was
      // deleted) gets its settings now, and the search is tried once more.
      if (!(err instanceof MeilisearchApiError && SETTINGS_ERRORS.has(err.cause?.code ?? ""))) throw err;
      this.settings = null;
      await this.ensureSettings();
      res = await run();
    }
    const { total, totalRelation } = totalOf(res.totalHits, this.exactUpTo);
    const dist = res.facetDistribution ?? {};
    const tagIds = Object.keys(dist.tagIds ?? {});
    const categoryIds = Object.keys(dist.categoryIds ?? {});
    const [tagRows, categoryRows] = await Promise.all([
      tagIds.length ? this.db.select({ id: tags.id, slug: tags.slug, name: tags.name }).from(tags).where(and(eq(tags.orgId, req.orgId), inArray(tags.id, tagIds))) : [],
      categoryIds.length
        ? this.db.select({ id: categories.id, slug: categories.slug, name: categories.name }).from(categories).where(and(eq(categories.orgId, req.orgId), inArray(categories.id, categoryIds)))
        : [],
    ]);
    const facets = toFacets(dist, {
      tags: new Map(tagRows.map((t) => [t.id, { slug: t.slug, name: t.name }])),
      categories: new Map(categoryRows.map((c) => [c.id, { slug: c.slug, name: c.name }])),
    });
    // Page mode counts facets over every match (not only the first exactUpTo): exact.
    const page = res.hits.slice(skip);
    return { ids: page.map((h) => h.id), total, totalRelation, facets, facetsApproximate: false, matches: page.map((h) => meiliMatch(h as never)) };
  }

  /** Writes the live objects among these ids and removes the rest (deleted or purged). */
  async sync(objectIds: string[]): Promise<void> {
    if (objectIds.length === 0) return;
    const rows = await this.db.select().from(mediaObjects).where(and(inArray(mediaObjects.id, objectIds), isNull(mediaObjects.deletedAt)));
    const byOrg = new Map<string, typeof rows>();
    for (const r of rows) byOrg.set(r.orgId, [...(byOrg.get(r.orgId) ?? []), r]);
    const docs: MeiliDoc[] = [];
    for (const [orgId, orgRows] of byOrg) {
      const labels = await labelsFor(this.db, orgId, orgRows.map((r) => r.id));
      const texts = new Map<string, string>();
      const textRows = await this.db
        .select({ objectId: mediaText.objectId, text: mediaText.text })
        .from(mediaText)
        .where(and(eq(mediaText.orgId, orgId), inArray(mediaText.objectId, orgRows.map((r) => r.id))))
        .orderBy(asc(mediaText.source), asc(mediaText.page));
      for (const t of textRows) texts.set(t.objectId, texts.has(t.objectId) ? `${texts.get(t.objectId)} ${t.text}` : t.text);
      const colors = await colorsOf(this.db, orgId, orgRows);
      for (const r of orgRows) {
        const l = labels.get(r.id)!;
        docs.push({
          id: r.id,
          orgId,
          bucketId: r.bucketId,
          key: r.key,
          keyWords: r.key.replace(/[/._-]+/g, " "),
          fileName: fileNameOf(r.key),
          labels: [...l.tags, ...l.categories].map((x) => x.name).join(" "),
          meta: Object.values(r.metadata).filter((v) => v !== null).join(" "),
          text: texts.get(r.id) ?? "",
          tagIds: l.tags.map((t) => t.id),
          categoryIds: l.categories.map((c) => c.id),
          kind: r.kind,
          size: r.size,
          createdAt: r.createdAt.getTime(),
          ...colors.get(r.id),
        });
      }
    }
    const live = new Set(docs.map((d) => d.id));
    await this.write(docs, objectIds.filter((id) => !live.has(id)));
  }

  /**
   * Removes the documents of objects the catalogue no longer has live (deleted, purged, or
   * never ours): a sync job lost to an outage, or an index restored from an older dump, leaves
   * them behind, and every search would count them. A document is only ever removed when the
   * database, read after the document was seen, has no live object of its id (documents are
   * written after their object's row commits), so a concurrent upload is never removed.
   * Returns how many were removed.
   */
  async prune(pageSize = 1000): Promise<number> {
    await this.ensureSettings();
    const stale: string[] = [];
    for (let offset = 0; ; offset += pageSize) {
      const page = await this.index.getDocuments({ fields: ["id"], limit: pageSize, offset });
      const ids = page.results.map((d) => String(d.id));
      if (ids.length === 0) break;
      const wellFormed = ids.filter((id) => UUID.test(id));
      const live = new Set(
        wellFormed.length
          ? (await this.db.select({ id: mediaObjects.id }).from(mediaObjects).where(and(inArray(mediaObjects.id, wellFormed), isNull(mediaObjects.deletedAt)))).map((r) => r.id)
          : [],
      );
      stale.push(...ids.filter((id) => !live.has(id)));
      if (ids.length < pageSize) break;
    }
    for (let i = 0; i < stale.length; i += pageSize) await settled(this.index.deleteDocuments(stale.slice(i, i + pageSize)), "delete stale documents");
    return stale.length;
  }

  /**
   * One sync batch: settings first (a bare index would take the documents but fail every
   * filtered search), then the writes, each waited for and checked. Any failure throws, so
   * the job is retried rather than marked done, and clears the settings so the retry
   * applies them again.
   */
  async write(docs: MeiliDoc[], gone: string[]): Promise<void> {
    try {
      await this.ensureSettings();
      if (docs.length) await settled(this.index.addDocuments(docs, { primaryKey: "id" }), "add documents");
      if (gone.length) await settled(this.index.deleteDocuments(gone), "delete documents");
    } catch (err) {
      this.settings = null;
      throw err;
    }
  }
}

/** The dominant colour (CIELAB) of each object's current version, where the worker found one. */
async function colorsOf(db: Db, orgId: string, rows: { id: string; etag: string | null }[]): Promise<Map<string, Pick<MeiliDoc, "colorL" | "colorA" | "colorB">>> {
  const etags = new Map(rows.map((r) => [r.id, r.etag]));
  const found = await db
    .select({ id: objectFacts.objectId, etag: objectFacts.sourceEtag, l: objectFacts.colorL, a: objectFacts.colorA, b: objectFacts.colorB })
    .from(objectFacts)
    .where(and(eq(objectFacts.orgId, orgId), inArray(objectFacts.objectId, rows.map((r) => r.id))));
  return new Map(found.filter((f) => f.l !== null && f.etag === etags.get(f.id)).map((f) => [f.id, { colorL: f.l!, colorA: f.a!, colorB: f.b! }]));
}
