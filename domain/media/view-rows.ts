import { type SQL, sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import type { MediaObject } from "../../contract/media.ts";
import type { Deps } from "../core/deps.ts";
import { THUMBNAIL } from "../derivatives/derivatives.ts";
import { thumbnailPathSigner } from "../derivatives/thumbnail-urls.ts";

/**
 * Media views of a page of objects in one statement, written by PostgreSQL as the API shows
 * them: this is the one definition of a media object's view (media_get, media_list, search,
 * similar, trash all read it).
 *
 * A listing's or a search's page is up to 200 views. Mapping rows to views in our process was
 * once twice what PostgreSQL spent answering (bench/notes/2026-11-27-fifth-sitting.md), then
 * decoding them from JSON and writing them back was a third of a listing's CPU
 * (bench/notes/2026-11-30-views-as-text.md): now the statement writes each view's JSON, and a
 * listing's REST answer carries that text as it is (domain/core/json-body.ts).
 *
 * The page is a CTE `page` of media_objects rows, whose `labels` column holds their tags and
 * categories as the view shows them (aggregating them from both label tables, an index probe per
 * object each, was over half of the statement). Its thumbnails are joined; the worker writes
 * `info` and the thumbnail row in one statement, so reading them together never shows a ready
 * thumbnail beside the `info` of the moment before.
 *
 * A ready thumbnail's `path` is signed with the organization's key, which only our process
 * holds: the statement writes a mark in its place, `"\u0000<object id>\u0000<etag, escaped>"`.
 * No value of an object can write that text: PostgreSQL's JSON escapes every control
 * character of a string, a NUL cannot be stored at all, and a backslash of the text is written
 * `\\`. signedViews replaces each mark with the signed path before anything reads the text.
 *
 * Times are written as Date's toISOString writes them: UTC, milliseconds (the rest cut), `Z`.
 *
 * `page` selects media_objects columns under their names in the table (a Drizzle select of
 * mediaViewColumns does); `orderBy` is the page's order, written over `v`, a page row.
 * The answer is one row: `views`, the JSON array as text, `n`, how many views it holds,
 * `ids`, their ids in the same order, comma-separated, and `marked`, whether a path is to sign.
 */
export function viewsOverPage(page: SQL, orderBy: SQL): SQL {
  return sql`with page as (${page})
    select coalesce('[' || string_agg(j.view::text, ',' order by ${orderBy}) || ']', '[]') as views, count(*)::int as n,
      coalesce(string_agg(v.id::text, ',' order by ${orderBy}), '') as ids,
      coalesce(bool_or(${MARKED}), false) as marked from (${withThumbnail(false)}) v, lateral (${VIEW}) j`;
}

/**
 * A page's rows with their thumbnail's columns (`t_*`), over the CTE `page`; `versioned`: also
 * each view's version, `version` (see rowVersionOf).
 */
const withThumbnail = (versioned: boolean) => sql`select page.*, d.state as t_state, d.width as t_width, d.height as t_height, d.content_type as t_content_type, d.etag as t_etag
      ${versioned ? sql`, page.id::text || '/' || page.row_version || '/' || coalesce(d.xmin::text || '/' || d.ctid::text, '') as version` : sql``}
      from page
      left join derivatives d on d.object_id = page.id and d.variant = ${sql.raw(`'${THUMBNAIL}'`)}`;

/** Whether a view row `v` carries a path to sign. */
const MARKED = sql`v.t_state = 'ready' and v.t_etag is not null`;

/** One view's JSON, `view`, from a row `v` of withThumbnail. */
const VIEW = sql`select row_to_json(r) as view from (select
      v.id as "id", v.bucket_id as "bucketId", v.key as "key", substring(v.key from '[^/]*$') as "fileName",
      v.size as "size", v.content_type as "contentType", v.kind as "kind", v.etag as "etag",
      v.metadata as "metadata", v.info as "info",
      case
        when v.t_state is null then null
        when v.t_state <> 'ready' then json_build_object('state', v.t_state, 'width', null, 'height', null, 'contentType', null, 'etag', null)
        when v.t_etag is null then json_build_object('state', v.t_state, 'width', v.t_width, 'height', v.t_height, 'contentType', v.t_content_type, 'etag', v.t_etag)
        else json_build_object('state', v.t_state, 'width', v.t_width, 'height', v.t_height, 'contentType', v.t_content_type, 'etag', v.t_etag,
          'path', ('"\\u0000' || v.id::text || '\\u0000' || substr(to_json(v.t_etag)::text, 2))::json)
      end as "thumbnail",
      coalesce(v.labels->'tags', '[]'::jsonb) as "tags", coalesce(v.labels->'categories', '[]'::jsonb) as "categories",
      ${isoTimeOf(sql`v.created_at`)} as "createdAt", ${isoTimeOf(sql`v.updated_at`)} as "updatedAt"
    ) r`;

/**
 * A view's version: the versions of the two rows it is written from, the object's media_objects
 * row and its thumbnail's derivatives row, each as the row version's transaction id (xmin) and
 * place (ctid). PostgreSQL never changes a row version in place: every change writes a new
 * version, at a new place, so the same pair names the same content, and a view kept under it
 * (view-cache.ts) is the view PostgreSQL would write now. (The same transaction writing a row
 * twice leaves two versions at two places; a place is reused only by a later transaction, once
 * the version there is dead.) A page's select writes its media_objects part as `row_version`
 * (rowVersionOf); the token is `<id>/<xmin>/<ctid>/<thumbnail xmin>/<thumbnail ctid>`, the
 * thumbnail's part empty when it has none.
 */
export const rowVersionOf = (table: SQL) => sql`(${table}.xmin::text || '/' || ${table}.ctid::text)`;
const VERSION = sql`v.version`;

/**
 * The versions of a page's views (see rowVersionOf), in the page's order, as one row: `versions`,
 * the tokens space-separated, and `n`. The page selects what viewsOverPage's does, and
 * `row_version`. What the views cost PostgreSQL to write (two thirds of a listing's statement) is
 * left to the views not kept (keptViews).
 */
export function versionsOverPage(page: SQL, orderBy: SQL): SQL {
  return sql`with page as (${page})
    select coalesce(string_agg(${VERSION}, ' ' order by ${orderBy}), '') as versions, count(*)::int as n
    from (${withThumbnail(true)}) v`;
}

/**
 * A page's views with their versions, in one row: `entries`, each view's
 * `<version>\x01<1 if marked, else 0>\x01<its JSON>`, joined by \x02, in the page's order
 * (viewsOfEntries reads it and keeps the views). PostgreSQL's JSON text never holds a control
 * character (it escapes them), so neither separator can occur inside a view. The page selects
 * what viewsOverPage's does, and `row_version`.
 */
export function viewsWithVersions(page: SQL, orderBy: SQL): SQL {
  return sql`with page as (${page})
    select coalesce(string_agg(${VERSION} || chr(1) || case when ${MARKED} then '1' else '0' end || chr(1) || j.view::text, chr(2) order by ${orderBy}), '') as entries
    from (${withThumbnail(true)}) v, lateral (${VIEW}) j`;
}

/** A timestamptz as Date's toISOString writes it, whatever the session's time zone. */
export function isoTimeOf(column: SQL): SQL {
  return sql`to_char((${column}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** A viewsOverPage answer's row (also read as columns of a larger statement). */
export interface ViewsRow {
  views: string;
  n: number;
  ids: string;
  marked: boolean;
}

/** The row of a viewsOverPage answer. */
export function viewsRowOf(result: unknown): ViewsRow {
  return rowsOf<ViewsRow>(result)[0] ?? NO_VIEWS;
}

/** The ids of a ViewsRow's `ids`, in order. */
export function idList(ids: string): string[] {
  return ids ? ids.split(",") : [];
}

/** A page of no views. */
export const NO_VIEWS: ViewsRow = { views: "[]", n: 0, ids: "", marked: false };

/** A ready thumbnail's mark (see viewsOverPage): the object's id, then its etag as a JSON string's inside. */
const MARK = /"\\u0000([0-9a-f-]{36})\\u0000((?:[^"\\]|\\.)*)"/g;

/** A mark with the key before it, as json_build_object writes them. */
const PATH_ENTRY = new RegExp(`, "path" : ${MARK.source}`, "g");

/**
 * The views' text with every ready thumbnail's path signed (one key lookup, only when a page
 * holds one). `primary` signs: its key may have to be written. With no `primary` the paths are
 * left out (deleted objects, whose thumbnails are not served).
 */
export async function signedViews(primary: Pick<Deps, "db" | "clock"> | null, orgId: string, { views, marked }: ViewsRow): Promise<string> {
  // Not a look through the text: a page's 60 KB took longer to search than to send.
  if (!marked) return views;
  if (!primary) return views.replace(PATH_ENTRY, "");
  const pathOf = await thumbnailPathSigner(primary, orgId);
  return views.replace(MARK, (_, id: string, etag: string) => JSON.stringify(pathOf(id, JSON.parse(`"${etag}"`) as string)));
}

/** The views of a viewsOverPage answer, signed (see signedViews), as objects. */
export async function viewsOfRow(primary: Pick<Deps, "db" | "clock"> | null, orgId: string, row: ViewsRow): Promise<MediaObject[]> {
  return JSON.parse(await signedViews(primary, orgId, row)) as MediaObject[];
}
