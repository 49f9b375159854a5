import { type SQL, sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import type { Label } from "../../contract/labels.ts";
import type { MediaObject, ThumbnailSummary } from "../../contract/media.ts";
import { THUMBNAIL, thumbnailSummary } from "../derivatives/derivatives.ts";
import { toMediaView } from "./view.ts";

/**
 * Media views of a page of objects in one statement, mapped by hand.
 *
 * A listing's or a search's page is up to 200 views. Read through Drizzle's select, mapping
 * the rows (a type check per field per row) cost twice what PostgreSQL spent answering
 * (bench/notes/2026-11-27-fifth-sitting.md). Here the page is a CTE `page` of media_objects rows, whose
 * `labels` column holds their tags and categories as the view shows them: aggregating them
 * from both label tables, an index probe per object each, was over half of the statement
 * (2.7 against 1.1 ms for a page of 100). Its thumbnails are joined. The columns are few and
 * named, so the mapping below is short and the same on postgres.js and PGlite. A single
 * object's view is a page of one.
 * The worker writes `info` and the thumbnail row in one statement, so reading them together
 * never shows a ready thumbnail beside the `info` of the moment before.
 *
 * The statement answers one row: `views`, the page's rows as one JSON array. postgres.js
 * decodes a row column by column in JavaScript (a string, then a parser, per field), and for
 * a page of 100 views with four JSON columns each that decoding was a fifth of the list's CPU
 * in our process (bench/notes/2026-11-28-sixth-sitting.md); one array is one native JSON.parse.
 *
 * `page` selects the columns of a MediaViewRow under their names in the table (a Drizzle
 * select of them does); `orderBy` is the page's order, written over `v`, a view row.
 */
export function viewsOverPage(page: SQL, orderBy: SQL): SQL {
  return sql`with page as (${page})
    select coalesce(json_agg(v order by ${orderBy}), '[]'::json) as views from (
      select page.*, d.state as t_state, d.width as t_width, d.height as t_height, d.content_type as t_content_type, d.etag as t_etag
      from page
      left join derivatives d on d.object_id = page.id and d.variant = ${sql.raw(`'${THUMBNAIL}'`)}
    ) v`;
}

/** The rows of a viewsOverPage answer (its one row's `views`; PGlite may hand JSON over as text). */
export function pageViewRows(result: unknown): PageViewRow[] {
  const views = rowsOf<{ views: PageViewRow[] | string }>(result)[0]?.views ?? [];
  return typeof views === "string" ? (JSON.parse(views) as PageViewRow[]) : views;
}

/** A view row of viewsOverPage, as JSON has it. */
export interface PageViewRow {
  id: string;
  bucket_id: string;
  key: string;
  size: number;
  content_type: string;
  kind: MediaObject["kind"];
  etag: string;
  metadata: MediaObject["metadata"];
  info: MediaObject["info"];
  created_at: string;
  updated_at: string;
  t_state: ThumbnailSummary["state"] | null;
  t_width: number | null;
  t_height: number | null;
  t_content_type: string | null;
  t_etag: string | null;
  labels: { tags: Label[]; categories: Label[] };
}

export function viewOfPageRow(r: PageViewRow): MediaObject {
  const thumbnail = r.t_state ? thumbnailSummary({ state: r.t_state, width: r.t_width, height: r.t_height, contentType: r.t_content_type, etag: r.t_etag }) : null;
  return toMediaView(
    {
      id: r.id,
      bucketId: r.bucket_id,
      key: r.key,
      size: r.size,
      contentType: r.content_type,
      kind: r.kind,
      etag: r.etag,
      metadata: r.metadata,
      info: r.info,
      createdAt: isoTime(r.created_at),
      updatedAt: isoTime(r.updated_at),
    },
    r.labels,
    thumbnail,
  );
}

/**
 * A timestamptz as JSON has it ("2026-11-29T20:14:53.123456+00:00" in a UTC session) written as
 * Date's toISOString writes it ("2026-11-29T20:14:53.123Z": milliseconds, the rest cut, as Date
 * parses), without the Date: two per view, parsing and writing them back was about a tenth of
 * a listing's CPU in our process. Any other form (another session time zone)
 * goes through Date.
 */
export function isoTime(json: string): string {
  if (json.length >= 25 && json.length <= 32 && json.endsWith("+00:00") && json.charCodeAt(4) === 45 && json.charCodeAt(10) === 84 && (json.length === 25 || json.charCodeAt(19) === 46)) {
    const fraction = json.length === 25 ? "" : json.slice(20, -6);
    return `${json.slice(0, 19)}.${(fraction + "000").slice(0, 3)}Z`;
  }
  return new Date(json).toISOString();
}
