import { errors } from "../domain/core/errors.ts";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { Meilisearch } from "meilisearch";
import type { Db } from "../db/client.ts";
import { categories, mediaObjects, tags } from "../db/schema/index.ts";
import { labelsFor } from "../domain/labels/object-labels.ts";
import { fileNameOf } from "../domain/media/kind.ts";
import type { Logger } from "../domain/ports/log.ts";
import type { SearchBackend, SearchHits, SearchRequest } from "../domain/ports/search.ts";
import { INDEX_SETTINGS, type MeiliDoc, meiliFilter, meiliPaging, meiliQuery, toFacets } from "./meili-translate.ts";

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

  constructor(
    opts: { url: string; key: string | null; indexPrefix: string },
    private readonly db: Db,
    private readonly log: Logger,
  ) {
    this.client = new Meilisearch({ host: opts.url, ...(opts.key ? { apiKey: opts.key } : {}) });
    this.indexUid = `${opts.indexPrefix.replace(/[^A-Za-z0-9_-]/g, "_")}_media`;
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

  async ensureIndex(): Promise<void> {
    try {
      await this.client.createIndex(this.indexUid, { primaryKey: "id" }).waitTask();
      await this.index.updateSettings(INDEX_SETTINGS).waitTask();
    } catch (err) {
      // Start anyway: searches fail until it is reachable, and sync jobs retry.
      this.log.warn("meilisearch not ready; index settings not applied", { error: String(err) });
    }
  }

  async search(req: SearchRequest): Promise<SearchHits> {
    // Its documents do not carry the worker's facts (yet): say so rather than ignore the filter.
    if (req.facts) throw errors.badRequest("Filters on file facts (hash, duplicates, taken-at, size, duration) need the PostgreSQL search backend; GET /api/media has them with any backend");
    const res = await this.index.search(meiliQuery(req.query), {
      filter: meiliFilter(req),
      facets: ["tagIds", "categoryIds", "kind"],
      attributesToRetrieve: ["id"],
      matchingStrategy: "all",
      ...meiliPaging(req.limit, req.offset),
    });
    const total = "totalHits" in res && typeof res.totalHits === "number" ? res.totalHits : (res.estimatedTotalHits ?? 0);
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
    return { ids: res.hits.map((h) => h.id), total, facets };
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
          tagIds: l.tags.map((t) => t.id),
          categoryIds: l.categories.map((c) => c.id),
          kind: r.kind,
          size: r.size,
          createdAt: r.createdAt.getTime(),
        });
      }
    }
    const live = new Set(docs.map((d) => d.id));
    const gone = objectIds.filter((id) => !live.has(id));
    if (docs.length) await this.index.addDocuments(docs, { primaryKey: "id" }).waitTask();
    if (gone.length) await this.index.deleteDocuments(gone).waitTask();
  }
}
