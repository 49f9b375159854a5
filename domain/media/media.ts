import { and, asc, count, desc, eq, isNotNull, isNull, lte, type SQL, sql } from "drizzle-orm";
import { DEFAULT_LIMIT, type Deleted, MAX_LIMIT } from "../../contract/common.ts";
import { rowsOf } from "../../db/client.ts";
import type { MediaObject } from "../../contract/media.ts";
import type { PresignedDownload } from "../../contract/presign.ts";
import { buckets, categories, mediaObjects, tags } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import { assertBucketAllowed } from "../access/visibility.ts";
import { preparedSql } from "../core/prepared.ts";
import { idList, NO_VIEWS, rowVersionOf, signedViews, type ViewsRow, versionsOverPage, viewsOfRow, viewsOverPage, viewsRowOf, viewsWithVersions } from "./view-rows.ts";
import { keptViews, viewCacheFor, viewsOfEntries } from "./view-cache.ts";
import { type JsonBody, withTextField } from "../core/json-body.ts";
import { resolveLiveObject } from "./object-refs.ts";
import { touchSearch } from "../search/index-rows.ts";
import { runHooks } from "./lifecycle.ts";
import { RETENTION_DAYS } from "./retention.ts";
import { onObjectRemoved } from "./object-hooks.ts";
import { labelSlugs } from "../labels/refs.ts";
import type { Deps } from "../core/deps.ts";
import { readDb } from "../core/reads.ts";
import { type FactFilters, factFilterCondition } from "../derivatives/facts.ts";
import { errors } from "../core/errors.ts";
import { enqueueJob } from "../core/jobs.ts";
import type { MediaKind } from "./kind.ts";
import { fileNameOf } from "./kind.ts";
import { type Page, page } from "../core/pagination.ts";
import { derivativePrefix, objectPath } from "./storage-keys.ts";
import { keptCounter, resolveForEgress } from "../usage/counters.ts";
import { announceUpdated } from "../events/object-events.ts";
import { keyPattern, objectConditions } from "./object-filters.ts";
import { answerCacheFor } from "../search/answer-cache.ts";

export { RETENTION_DAYS } from "./retention.ts";

export const MEDIA_SORTS = ["created_at", "size", "key"] as const;

/** The media_objects columns a view is written from: what viewsOverPage's page selects. */
const mediaViewColumns = {
  id: mediaObjects.id,
  bucketId: mediaObjects.bucketId,
  key: mediaObjects.key,
  size: mediaObjects.size,
  contentType: mediaObjects.contentType,
  kind: mediaObjects.kind,
  etag: mediaObjects.etag,
  metadata: mediaObjects.metadata,
  info: mediaObjects.info,
  createdAt: mediaObjects.createdAt,
  updatedAt: mediaObjects.updatedAt,
  labels: mediaObjects.labels,
};

const p = (name: string) => sql.placeholder(name);

/** mediaViewColumns of a media_objects row named `o`, for statements written in SQL. */
const viewColumns = sql.raw(Object.values(mediaViewColumns).map((c) => `o.${c.name}`).join(", "));

/** The views of the objects of an organization that `where` selects, over viewsOverPage; `orderBy` is written over `v`. */
const viewsWhere = (deps: Pick<Deps, "db">, where: SQL | undefined, orderBy: SQL) =>
  viewsOverPage(deps.db.select(mediaViewColumns).from(mediaObjects).where(where).getSQL(), orderBy);

/**
 * Media views of objects of an organization by id (a search's page, the trash's), in the
 * order given, leaving out ids not found: one statement, whatever their number.
 * `live`: only objects not deleted (search), their ready thumbnails' paths signed by `primary`;
 * otherwise deleted ones too (the trash), with no paths (a deleted object's thumbnail is not served).
 */
export async function viewsOf(deps: Pick<Deps, "db" | "clock">, orgId: string, ids: string[], opts: ViewsOfOptions): Promise<MediaObject[]> {
  return JSON.parse((await viewsTextOf(deps, orgId, ids, opts)).views) as MediaObject[];
}

type ViewsOfOptions = { live: true; primary: Pick<Deps, "db" | "clock"> } | { live: false };

/** viewsOf's views as JSON text (signed), with their ids in order (comma-separated). */
export async function viewsTextOf(deps: Pick<Deps, "db" | "clock">, orgId: string, ids: string[], opts: ViewsOfOptions): Promise<{ views: string; ids: string }> {
  if (ids.length === 0) return { views: "[]", ids: "" };
  if (opts.live) {
    // Views of these objects kept here: the page's versions first, and PostgreSQL writes only
    // the views not kept. None: every view written, with its version, in one statement.
    const values = { ids: ids.join(","), orgId };
    if (viewCacheFor(deps.db).holdsAny(ids)) {
      const [row] = rowsOf<{ versions: string | null }>(await preparedSql(deps.db, "media_view_versions_live", versionsById).execute(values));
      const kept = await keptViews(deps.db, orgId, row?.versions ?? "", VERSIONED_BY_ID);
      if (kept) return { views: await signedViews(opts.primary, orgId, kept), ids: kept.ids };
      // A row changed between the two statements: the views under one snapshot, below.
    } else {
      const [row] = rowsOf<{ entries: string | null }>(await preparedSql(deps.db, "media_views_with_versions", viewsWithVersionsById).execute(values));
      const found = viewsOfEntries(deps.db, row?.entries ?? "");
      return { views: await signedViews(opts.primary, orgId, found), ids: found.ids };
    }
  }
  // Prepared by name: its generic plan (an index probe per id) serves one id or 200 alike.
  const found = viewsRowOf(await preparedSql(deps.db, opts.live ? "media_views_live" : "media_views", () => viewsById(opts)).execute({ ids: ids.join(","), orgId }));
  return { views: await signedViews(opts.live ? opts.primary : null, orgId, found), ids: found.ids };
}

/**
 * The organization's objects (`orgId`) whose ids are `ids` (a placeholder each, the ids
 * comma-separated), with their place in `ids` (`ord`); `live`: not deleted; `versioned`: with
 * their row versions (`row_version`, for the view cache).
 */
const objectsById = (opts: { live: boolean; versioned?: boolean }) =>
  sql`select ${viewColumns}${opts.versioned ? sql`, ${rowVersionOf(sql`o`)} as row_version` : sql``}, u.ord
    from unnest(string_to_array(${p("ids")}, ',')::uuid[]) with ordinality u(id, ord)
    join media_objects o on o.id = u.id
    where o.org_id = ${p("orgId")} ${opts.live ? sql`and o.deleted_at is null` : sql``}`;

/** The views of the organization's objects whose ids are `ids`, in the order of `ids`. */
const viewsById = (opts: { live: boolean }) => viewsOverPage(objectsById(opts), sql`v.ord`);

/** The organization's views by id with their versions, for the views keptViews does not hold (any object, deleted or not: the versions decide). */
export const VERSIONED_BY_ID = {
  name: "media_views_versioned",
  build: () => viewsWithVersions(objectsById({ live: false, versioned: true }), sql`v.ord`),
};

/** The versions (versionsOverPage) of the organization's live objects whose ids are `ids`, in that order. */
const versionsById = () => versionsOverPage(objectsById({ live: true, versioned: true }), sql`v.ord`);

/** The views of the organization's live objects whose ids are `ids`, in that order, with their versions (viewsWithVersions). */
const viewsWithVersionsById = () => viewsWithVersions(objectsById({ live: true, versioned: true }), sql`v.ord`);

/**
 * The media_get read: loadMediaView, from a replica when one may serve it (a write's own answer
 * reads the primary), with the signed thumbnail path a listing's row carries.
 */
export function getMedia(deps: Deps, caller: Caller, id: string): Promise<MediaObject> {
  return loadMediaView({ db: readDb(deps, caller.orgId), clock: deps.clock }, caller, id, deps);
}

/**
 * A live object of the caller's organization as a view, in one prepared statement (404
 * otherwise; 403 outside a restricted key's bucket), with its thumbnail's signed path as a
 * listing gives it, so every answer with one object agrees with the lists. `primary` signs
 * (its key may have to be written) when `deps` reads from a replica.
 */
export async function loadMediaView(deps: Pick<Deps, "db" | "clock">, caller: Caller, id: string, primary: Pick<Deps, "db" | "clock"> = deps): Promise<MediaObject> {
  const [view] = await viewsOfRow(
    primary,
    caller.orgId,
    viewsRowOf(
      await preparedSql(deps.db, "media_view_live", () =>
        viewsWhere(deps, and(eq(mediaObjects.id, p("id")), eq(mediaObjects.orgId, p("orgId")), isNull(mediaObjects.deletedAt)), sql`v.id`),
      ).execute({ id, orgId: caller.orgId }),
    ),
  );
  if (!view) throw errors.notFound("Media object");
  assertBucketAllowed(caller, view.bucketId, "The media object");
  return view;
}

export interface MediaQuery extends FactFilters {
  bucketId?: string | undefined;
  kind?: MediaKind | undefined;
  search?: string | undefined;
  /** Comma-separated tag slugs: objects carrying every one. */
  tags?: string | undefined;
  /** Comma-separated category slugs: objects in each one or below it. */
  categories?: string | undefined;
  /** A key prefix ending in "/" ("" for the top): only the keys directly in it, and its subfolders. */
  folder?: string | undefined;
  sort: (typeof MEDIA_SORTS)[number];
  order: "asc" | "desc";
  limit: number;
  offset: number;
}

/** A page of a folder's listing: its subfolders (names, sorted) beside its objects. */
export type MediaPage = Page<MediaObject> & { folders?: string[] };

/** Subfolders shown at most: a folder with more lists the first ones. */
const MAX_FOLDERS = 1000;

/**
 * A page of the organization's media objects. The answer is JSON text as PostgreSQL wrote its
 * views (view-rows.ts): REST sends it as it is, other surfaces read its value.
 */
export async function listMedia(primary: Deps, caller: Caller, q: MediaQuery): Promise<JsonBody<MediaPage>> {
  const deps = { ...primary, db: readDb(primary, caller.orgId) };
  // A tag or category is named by id, slug or name (domain/labels/refs.ts).
  const tagSlugs = await labelSlugs(deps.db, tags, caller.orgId, q.tags);
  const categorySlugs = await labelSlugs(deps.db, categories, caller.orgId, q.categories);
  const facts = await factFilterCondition(deps, caller, q);
  const column = { created_at: mediaObjects.createdAt, size: mediaObjects.size, key: mediaObjects.key }[q.sort];
  const dir = q.order === "asc" ? asc : desc;
  const pageOrder = sql`v.${sql.identifier(q.sort)} ${sql.raw(q.order)}, v.id ${sql.raw(q.order)}`;
  const listing = (cond: SQL | undefined, bounds: SQL) =>
    viewsOverPage(sql`${deps.db.select(mediaViewColumns).from(mediaObjects).where(cond).orderBy(dir(column), dir(mediaObjects.id)).getSQL()} ${bounds}`, pageOrder);
  // The same page, its views' versions only (see unfilteredPages).
  listing.versions = (cond: SQL | undefined, bounds: SQL) =>
    versionsOverPage(
      sql`${deps.db
        .select({ ...mediaViewColumns, rowVersion: sql<string>`${rowVersionOf(sql`${mediaObjects}`)}`.as("row_version") })
        .from(mediaObjects)
        .where(cond)
        .orderBy(dir(column), dir(mediaObjects.id))
        .getSQL()} ${bounds}`,
      pageOrder,
    );
  const filtered = Boolean(q.kind || q.search || tagSlugs.length || categorySlugs.length || facts || q.folder !== undefined);
  // Outside a restricted key's bucket: 404 or 403 as everywhere (resolveBucket throws either).
  if (!filtered && !(q.bucketId && caller.bucketId && caller.bucketId !== q.bucketId)) {
    return pageBody(primary, caller.orgId, await unfilteredPages(deps, caller, q, listing), q.offset);
  }

  // The key search alone (the console's search box, the peer's operation): one statement.
  if (q.search && !q.kind && !tagSlugs.length && !categorySlugs.length && !facts && q.folder === undefined && !(q.bucketId && caller.bucketId && caller.bucketId !== q.bucketId)) {
    const found = deps.db === primary.db ? await keptKeySearch(deps, caller, { ...q, search: q.search }) : await keySearchPages(deps, caller, { ...q, search: q.search });
    return pageBody(primary, caller.orgId, found, q.offset);
  }

  // A folder is a key prefix: its objects are the keys with no further "/" after it, its
  // subfolders the distinct next segments of the others (with the same filters).
  const where = await objectConditions(deps, caller, { bucketId: q.bucketId, kind: q.kind, search: q.search, prefix: q.folder, tagSlugs, categorySlugs });
  if (facts) where.push(facts);
  const rest = q.folder !== undefined ? sql`substr(${mediaObjects.key}, char_length(${q.folder}) + 1)` : null;
  const filter = and(...where, rest ? sql`strpos(${rest}, '/') = 0` : undefined);
  const [rows, [{ total } = { total: 0 }], folders] = await Promise.all([
    deps.db.execute(listing(filter, sql`limit ${q.limit} offset ${q.offset}`)),
    deps.db.select({ total: count() }).from(mediaObjects).where(filter),
    rest
      ? deps.db
          .selectDistinct({ name: sql<string>`split_part(${rest}, '/', 1)` })
          .from(mediaObjects)
          .where(and(...where, sql`strpos(${rest}, '/') > 0`))
          .orderBy(sql`1`)
          .limit(MAX_FOLDERS)
      : null,
  ]);
  return pageBody(primary, caller.orgId, { ...viewsRowOf(rows), total }, q.offset, folders ? { folders: folders.map((f) => f.name) } : {});
}

/** A page of views as PostgreSQL wrote them, with the total of what the page was cut from. */
type ViewsPage = ViewsRow & { total: number };

/** The answer of a listing: its views' text, signed, inside the page's fields (as `page` writes them). */
async function pageBody(primary: Pick<Deps, "db" | "clock">, orgId: string, found: ViewsPage, offset: number, extra: Record<string, unknown> = {}): Promise<JsonBody<MediaPage>> {
  const { data: _, ...fields } = page(new Array<never>(found.n), found.total, offset);
  return withTextField("data", await signedViews(primary, orgId, found), { ...fields, ...extra });
}

/**
 * First pages of these sizes are statements of their own, the size written into the SQL.
 * PostgreSQL plans a prepared statement again on every call when its generic plan looks
 * costlier than the plans for the values given, and a LIMIT or OFFSET parameter makes it
 * guess a tenth of the table: the listing was planned anew each time (1.3 of its 5 ms in
 * PostgreSQL). A first page of a size written in keeps one plan per connection. Any other
 * size or offset takes parameters (planned per call, as before). The sizes are the default,
 * the console's page and the maximum, and no more, because every pooled connection keeps each
 * statement it ran (about 330 KB in PostgreSQL): three sizes for three sorts, two orders and
 * two scopes are at most 36 statements, about 12 MB per connection.
 */
const FIRST_PAGE_SIZES: ReadonlySet<number> = new Set([DEFAULT_LIMIT, 100, MAX_LIMIT]);

/**
 * The unfiltered listing, the common call, in one prepared statement per order and scope,
 * whatever the organization: the total is the kept counters (the folded count plus the
 * pending deltas, no count over a million rows), and it drives the statement, so an empty
 * page still carries it and no row at all means the bucket is not the organization's (404).
 * The bucket check, the page and the total were three statements, two of them holding a
 * pooled connection at once. The statement answers the page's view versions, not its views:
 * the views kept for those versions are taken as they are, and only the others are written by
 * PostgreSQL (keptViews, a second statement when any is missing).
 */
async function unfilteredPages(deps: Deps, caller: Caller, q: MediaQuery, listing: Listing): Promise<ViewsPage> {
  const bucketId = q.bucketId ?? caller.bucketId;
  const first = q.offset === 0 && FIRST_PAGE_SIZES.has(q.limit);
  const values: Record<string, unknown> = { orgId: caller.orgId, bucketId, ...(first ? {} : { limit: q.limit, offset: q.offset }) };
  // `v` writes a value: a placeholder of the prepared statement, or the value itself.
  const statement = (v: (name: string) => SQL | ReturnType<typeof p>, views: boolean) => {
    const total = bucketId
      ? sql`select ${keptCounter("b", "object_count")} as n from buckets b where b.id = ${v("bucketId")} and b.org_id = ${v("orgId")}`
      : sql`select ${keptCounter("u", "object_count")} as n from org_usage u where u.org_id = ${v("orgId")}`;
    const cond = and(eq(mediaObjects.orgId, v("orgId")), isNull(mediaObjects.deletedAt), bucketId ? eq(mediaObjects.bucketId, v("bucketId")) : undefined);
    const bounds = first ? sql.raw(`limit ${q.limit}`) : sql`limit ${v("limit")} offset ${v("offset")}`;
    return sql`with total as (${total}) select total.n as total, pv.* from total, (${(views ? listing : listing.versions)(cond, bounds)}) pv`;
  };
  // The page's versions first: the views kept for them are taken as they are (view-cache.ts).
  const name = `media_page_versions_${q.sort}_${q.order}${bucketId ? "_bucket" : ""}${first ? `_first${q.limit}` : ""}`;
  const [versioned] = rowsOf<{ total: string | number; versions: string | null }>(await preparedSql(deps.db, name, () => statement(p, false)).execute(values));
  if (!versioned && bucketId) throw errors.notFound("Bucket");
  if (!versioned) return { ...NO_VIEWS, total: 0 };
  const kept = await keptViews(deps.db, caller.orgId, versioned.versions ?? "", VERSIONED_BY_ID);
  if (kept) return { ...kept, total: Number(versioned.total) };
  // A row changed between the two statements: the page and its views under one snapshot, in a
  // statement not kept prepared (it is rare; prepared, each connection would keep one per shape).
  const [row] = rowsOf<ViewsRow & { total: string | number }>(await deps.db.execute(statement((n) => sql`${values[n]}`, true)));
  if (!row && bucketId) throw errors.notFound("Bucket");
  return row ? { ...row, total: Number(row.total) } : { ...NO_VIEWS, total: 0 };
}

/** A listing's page as views (viewsOverPage), and as their versions (versionsOverPage). */
type Listing = ((cond: SQL | undefined, bounds: SQL) => SQL) & { versions: (cond: SQL | undefined, bounds: SQL) => SQL };

/** A key search's page as kept: its objects' ids in order, and the total. */
interface KeySearchHits {
  ids: string[];
  total: number;
}

/**
 * A key search asked again (the console's search box, an agent paging back) answers from its
 * page's ids and total as kept (domain/search/answer-cache.ts) while nothing of the
 * organization's search rows changed: the search rows are one per live object, rewritten in
 * the transaction of every change to its key, bucket, size or deletion, so a change to what
 * the search matches or sorts on is a change row. Finding and counting the matches (a heap
 * block read per match) is skipped; the page's view versions are read by id, and the views kept
 * for them taken as they are (keptViews).
 * Only where the listing reads the primary: the change rows are checked there.
 */
async function keptKeySearch(deps: Deps, caller: Caller, q: MediaQuery & { search: string }): Promise<ViewsPage> {
  const cache = answerCacheFor(deps.db);
  const bucketId = q.bucketId ?? caller.bucketId ?? null;
  const key = `media_key_search ${JSON.stringify([caller.orgId, bucketId, q.search, q.sort, q.order, q.limit, q.offset])}`;
  // A kept page's view versions are read in the statement that checks it; the views not kept
  // here are written by PostgreSQL in a second (none when all are).
  const { hits: kept, taken, along } = await cache.lookupAlong<KeySearchHits, { versions: string | null }>(deps.db, caller.orgId, key, {
    name: "media_key_search_kept_versions",
    sql: versionsById,
    values: (hits) => ({ ids: hits.ids.join(",") }),
  });
  cache.prune(deps.db, (err) => deps.log.warn("search_changes prune failed", { err: String(err) }));
  if (kept) {
    const views = await keptViews(deps.db, caller.orgId, along!.versions ?? "", VERSIONED_BY_ID);
    if (views) return { ...views, total: kept.total };
    // A row changed between the two statements: the search again, the page and its views under one snapshot.
  }
  const found = await keySearchPages(deps, caller, q);
  // No match, nothing kept: an empty answer costs little to find again, and its bucket may be
  // deleted with no change row (only an empty bucket can be), which must then answer 404.
  if (found.total > 0) cache.store(key, taken, { ids: idList(found.ids), total: found.total } satisfies KeySearchHits);
  return found;
}

/**
 * A key search with no other filter, in one prepared statement per sort, order and scope, the
 * term a parameter: the matches are read once (their row address, id and sort column,
 * materialized), the total counts them and the page is cut from them, and the bucket's row
 * drives the statement as in unfilteredPages (no row: not the organization's bucket, 404). It
 * was a bucket check, then the page and a count on two pooled connections, each finding and
 * rechecking every match: the matches' heap blocks were most of its PostgreSQL time.
 * The page's rows are read again whole by their address (ctid, a heap fetch each, the version
 * this statement's snapshot matched), which costs a quarter of fetching them by id through the
 * primary key and keeps the materialized matches narrow when a term matches many objects.
 */
async function keySearchPages(deps: Deps, caller: Caller, q: MediaQuery & { search: string }): Promise<ViewsPage> {
  const bucketId = q.bucketId ?? caller.bucketId;
  const first = q.offset === 0 && FIRST_PAGE_SIZES.has(q.limit);
  const [row] = rowsOf<ViewsRow & { total: string | number }>(
    await preparedSql(deps.db, `media_key_search_${q.sort}_${q.order}${bucketId ? "_bucket" : ""}${first ? `_first${q.limit}` : ""}`, () => {
      const dir = sql.raw(q.order);
      const bounds = first ? sql.raw(`limit ${q.limit}`) : sql`limit ${p("limit")} offset ${p("offset")}`;
      const pageRows = sql`select m.t from matched m order by m.s ${dir}, m.id ${dir} ${bounds}`;
      return sql`with matched as materialized (
          select o.ctid as t, o.id, o.${sql.identifier(q.sort)} as s from media_objects o
          where o.org_id = ${p("orgId")} and o.deleted_at is null ${bucketId ? sql`and o.bucket_id = ${p("bucketId")}` : sql``} and o.key ilike ${p("pattern")}
        )
        select (select count(*) from matched) as total, pv.*
        from (${bucketId ? sql`select 1 from buckets b where b.id = ${p("bucketId")} and b.org_id = ${p("orgId")}` : sql`select 1`}) scope,
          (${viewsWhere(deps, sql`ctid = any(array(${pageRows}))`, sql`v.${sql.identifier(q.sort)} ${dir}, v.id ${dir}`)}) pv`;
    }).execute({ orgId: caller.orgId, bucketId, pattern: keyPattern(q.search), ...(first ? {} : { limit: q.limit, offset: q.offset }) }),
  );
  if (!row) throw errors.notFound("Bucket");
  return { ...row, total: Number(row.total) };
}

/**
 * Soft delete: hidden from every list, search and get at once, and no longer counted in
 * usage; the bytes stay for RETENTION_DAYS, then the purge job removes them.
 */
export async function deleteMedia(deps: Deps, caller: Caller, id: string): Promise<Deleted> {
  await resolveLiveObject(deps.db, caller, id);
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const [row] = await tx
      .update(mediaObjects)
      .set({ deletedAt: now })
      .where(and(eq(mediaObjects.id, id), eq(mediaObjects.orgId, caller.orgId), isNull(mediaObjects.deletedAt)))
      .returning();
    if (!row) throw errors.notFound("Media object");
    await runHooks(onObjectRemoved, { tx, deps, at: now, orgId: caller.orgId, bucketId: row.bucketId, how: "deleted", object: row });
  });
  deps.jobs.kick();
  return { id, deleted: true };
}

export async function updateMetadata(
  deps: Deps,
  caller: Caller,
  id: string,
  metadata: Record<string, string | number | boolean | null>,
): Promise<MediaObject> {
  await resolveLiveObject(deps.db, caller, id);
  await deps.db.transaction(async (tx) => {
    const changed = await tx
      .update(mediaObjects)
      .set({ metadata, updatedAt: deps.clock.now() })
      .where(and(eq(mediaObjects.id, id), eq(mediaObjects.orgId, caller.orgId), isNull(mediaObjects.deletedAt)))
      .returning({ id: mediaObjects.id });
    if (changed.length === 0) throw errors.notFound("Media object");
    await touchSearch(tx, deps, caller.orgId, [id]);
    await announceUpdated(tx, caller.orgId, [id], ["metadata"], deps.clock.now());
  });
  deps.jobs.kick();
  return loadMediaView(deps, caller, id);
}

/** A presigned GET for a live object; its size is counted as (estimated) egress. */
export async function presignDownload(deps: Deps, caller: Caller, input: { objectId: string; expiresIn: number }): Promise<PresignedDownload> {
  const now = deps.clock.now();
  const row = await resolveForEgress(deps, caller, input.objectId, "download", now);
  const url = deps.storage.presignGet(objectPath(row.bucketId, row.key), { expiresIn: input.expiresIn, downloadName: fileNameOf(row.key), now });
  deps.meters?.egressIssued("download", row.size);
  return {
    url,
    method: "GET",
    objectId: row.id,
    key: row.key,
    expiresIn: input.expiresIn,
    expiresAt: new Date(now.getTime() + input.expiresIn * 1000).toISOString(),
  };
}

/**
 * Types a browser shows in place without running anything. Anything else (HTML, SVG, XML,
 * JavaScript, ...) is streamed as an attachment: on any S3 store the signed
 * response-content-disposition makes it a download, never a page of the storage origin.
 */
export function playsInPlace(contentType: string): boolean {
  const t = contentType.split(";")[0]!.trim().toLowerCase();
  if (t === "image/svg+xml") return false;
  return /^(image|video|audio)\//.test(t) || t === "application/pdf" || t === "text/plain";
}

/** Like a download, but for playing in place: no attachment disposition (but for active types, see playsInPlace). */
export async function streamUrl(deps: Deps, caller: Caller, id: string, expiresIn = 3600): Promise<PresignedDownload> {
  const now = deps.clock.now();
  const row = await resolveForEgress(deps, caller, id, "stream", now);
  const url = deps.storage.presignGet(objectPath(row.bucketId, row.key), { expiresIn, now, ...(playsInPlace(row.contentType) ? {} : { downloadName: fileNameOf(row.key) }) });
  deps.meters?.egressIssued("stream", row.size);
  return { url, method: "GET", objectId: row.id, key: row.key, expiresIn, expiresAt: new Date(now.getTime() + expiresIn * 1000).toISOString() };
}

/** Finds soft-deleted objects past retention and enqueues their purge (once each). */
export async function schedulePurges(deps: Deps, limit = 500): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - RETENTION_DAYS * 86_400_000);
  const n = await deps.db.transaction(async (tx) => {
    const due = await tx
      .select({ id: mediaObjects.id, orgId: mediaObjects.orgId })
      .from(mediaObjects)
      .where(and(isNotNull(mediaObjects.deletedAt), lte(mediaObjects.deletedAt, cutoff), isNull(mediaObjects.purgeQueuedAt)))
      .limit(limit)
      .for("update", { skipLocked: true });
    for (const row of due) {
      await enqueueJob(tx, "media.purge", { orgId: row.orgId, objectId: row.id });
      await tx.update(mediaObjects).set({ purgeQueuedAt: deps.clock.now() }).where(eq(mediaObjects.id, row.id));
    }
    return due.length;
  });
  if (n > 0) deps.jobs.kick();
  return n;
}

/**
 * The purge job: removes a soft-deleted object's bytes and derivatives, then its row.
 * The bytes are left alone when a live object has since been uploaded at the same key.
 */
export async function purgeObject(deps: Deps, objectId: string): Promise<void> {
  const [row] = await deps.db.select().from(mediaObjects).where(and(eq(mediaObjects.id, objectId), isNotNull(mediaObjects.deletedAt)));
  if (!row) return;
  const [live] = await deps.db
    .select({ id: mediaObjects.id })
    .from(mediaObjects)
    .where(and(eq(mediaObjects.bucketId, row.bucketId), eq(mediaObjects.key, row.key), isNull(mediaObjects.deletedAt)));
  if (!live) await deps.storage.delete(objectPath(row.bucketId, row.key));
  await deps.storage.deletePrefix(derivativePrefix(row.bucketId, row.id));
  await deps.db.transaction(async (tx) => {
    const gone = await tx.delete(mediaObjects).where(eq(mediaObjects.id, row.id)).returning({ id: mediaObjects.id });
    if (gone.length === 0) return;
    await runHooks(onObjectRemoved, { tx, deps, at: deps.clock.now(), orgId: row.orgId, bucketId: row.bucketId, how: "purged", object: row });
  });
}

