// Views kept by the versions of their rows (domain/media/view-cache.ts): the unfiltered listing
// and a key search asked again take kept views, and never one that is not what PostgreSQL would
// write now, whoever changed the rows (this server, another instance, a statement by hand).

import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { prepared, preparedSql } from "../../domain/core/prepared.ts";
import { VERSIONED_BY_ID } from "../../domain/media/media.ts";
import { keptViews, ViewCache, viewCacheFor, viewsOfEntries } from "../../domain/media/view-cache.ts";
import { rowVersionOf, viewsWithVersions } from "../../domain/media/view-rows.ts";
import { eventually } from "../support/eventually.ts";
import { withServerAndOrg } from "../support/fixtures.ts";
import { png } from "../support/media-files.ts";
import { newOrg, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

type Row = Record<string, any>;

let server: TestServer;
let org: TestOrg;
let bucket: { id: string };
let objects: Row[];
/** While set, the statement that writes the views not kept answers other versions than asked: a row changed in between. */
let changedInBetween = 0;

withServerAndOrg({
  ready: async (ctx) => {
    ({ server, org } = ctx);
    // Before any listing builds it: the statement keptViews writes missing views with, able to
    // answer as if each row had changed since the page's versions were read.
    const db = ctx.server.services.deps.db;
    const real = preparedSql(db, "test_views_versioned", VERSIONED_BY_ID.build);
    prepared(db, VERSIONED_BY_ID.name, () => ({
      async execute(values: Record<string, unknown>) {
        const rows = rowsOf<{ entries: string }>(await real.execute(values));
        if (changedInBetween === 0) return rows;
        changedInBetween--;
        // Another version, and a view that must not be served: what a row changed meanwhile would answer.
        const tampered = rows[0]!.entries
          .split("\x02")
          .map((e) => `${e.slice(0, e.indexOf("\x01"))}~\x010\x01${JSON.stringify({ id: "not this version" })}`)
          .join("\x02");
        return [{ entries: tampered }];
      },
    }));
    bucket = (await org.admin.post("/api/buckets", { name: "kept-views" })).body;
    objects = [];
    for (let i = 0; i < 4; i++) objects.push(await upload(org.admin, bucket.id, `kept/photo-${i}.png`, await png(40 + i, 30), { contentType: "image/png" }));
    // Thumbnails settled: later listings change only by what the tests do.
    for (const o of objects) {
      await eventually(async () => ((await org.admin.get(`/api/media/${o.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: `the thumbnail of ${o.key}` });
    }
  },
});

const db = () => server.services.deps.db;
const list = async (query = "") => (await org.admin.get(`/api/media?bucketId=${bucket.id}&limit=100${query}`)).body;
const byId = (page: Row) => new Map<string, Row>(page.data.map((o: Row) => [o.id, o]));
/** The current version token of an object's view (view-rows.ts, rowVersionOf). */
async function versionOf(id: string): Promise<string> {
  return rowsOf<{ v: string }>(
    await db().execute(sql`select o.id::text || '/' || o.xmin::text || '/' || o.ctid::text || '/' || coalesce(d.xmin::text || '/' || d.ctid::text, '') as v
      from media_objects o left join derivatives d on d.object_id = o.id and d.variant = 'thumbnail' where o.id = ${id}`),
  )[0]!.v;
}

/** Every listed view is the single-object answer, field by field. */
async function agreesWithGet(page: Row) {
  for (const o of page.data) expect(o).toEqual((await org.admin.get(`/api/media/${o.id}`)).body);
}

describe("the unfiltered listing", () => {
  test("a listing asked again takes its views as kept, and answers the same", async () => {
    const first = await list();
    const before = viewCacheFor(db()).stats.views;
    expect(before).toBeGreaterThanOrEqual(objects.length);
    const again = await list();
    expect(again).toEqual(first);
    expect(viewCacheFor(db()).stats.views).toBe(before);
    await agreesWithGet(again);
  });

  test("every change to a view's rows is in the next listing: through the API, and by hand as another instance would write it", async () => {
    await list();
    const [a, b, c, d] = objects as [Row, Row, Row, Row];
    await org.admin.put(`/api/media/${a.id}/metadata`, { metadata: { caption: "changed" } });
    const tag = (await org.admin.post("/api/tags", { name: "kept-tag" })).body;
    await org.admin.put(`/api/objects/${b.id}/tags`, { tagIds: [tag.id] });
    // Written by hand, as an instance of another version would: the object's row and its thumbnail's row.
    await db().execute(sql`update media_objects set info = info || '{"byHand": true}'::jsonb where id = ${c.id}`);
    await db().execute(sql`update derivatives set width = 7 where object_id = ${d.id} and variant = 'thumbnail'`);
    const page = byId(await list());
    expect(page.get(a.id)!.metadata).toEqual({ caption: "changed" });
    expect(page.get(b.id)!.tags.map((t: Row) => t.slug)).toEqual(["kept-tag"]);
    expect(page.get(c.id)!.info.byHand).toBe(true);
    expect(page.get(d.id)!.thumbnail.width).toBe(7);
    await agreesWithGet(await list());
    // A change that takes an object out of the page: gone from the next one.
    await db().execute(sql`update media_objects set deleted_at = now() where id = ${d.id}`);
    expect(byId(await list()).has(d.id)).toBe(false);
    await db().execute(sql`update media_objects set deleted_at = null where id = ${d.id}`);
    expect(byId(await list()).has(d.id)).toBe(true);
  });

  test("a row changed between the page's versions and its views: the page and its views are read again in one statement", async () => {
    const [a] = objects as [Row];
    await db().execute(sql`update media_objects set metadata = '{"race": "lost"}'::jsonb where id = ${a.id}`);
    changedInBetween = 1;
    const page = await list();
    expect(changedInBetween).toBe(0);
    expect(byId(page).get(a.id)!.metadata).toEqual({ race: "lost" });
    expect(page.total).toBe(objects.length);
    await agreesWithGet(page);
    expect(await list()).toEqual(page);
  });

  test("the same transaction writing a row twice: the version read is the last one", async () => {
    const [a] = objects as [Row];
    await list();
    await db().transaction(async (tx) => {
      await tx.execute(sql`update media_objects set metadata = '{"step": "one"}'::jsonb where id = ${a.id}`);
      await tx.execute(sql`update media_objects set metadata = '{"step": "two"}'::jsonb where id = ${a.id}`);
    });
    expect(byId(await list()).get(a.id)!.metadata).toEqual({ step: "two" });
  });
});

describe("a key search asked again", () => {
  test("its kept page takes kept views; a change to a view (not to what the search matches) is in the next answer", async () => {
    const target = objects[2]!;
    const search = async () => (await org.admin.get(`/api/media?bucketId=${bucket.id}&search=photo-2`)).body;
    const first = await search();
    expect(first.data.map((o: Row) => o.id)).toEqual([target.id]);
    expect(await search()).toEqual(first);
    await org.admin.put(`/api/media/${target.id}/metadata`, { metadata: { caption: "seen" } });
    const again = await search();
    expect(again.data[0].metadata).toEqual({ caption: "seen" });
    await agreesWithGet(again);
    await db().execute(sql`update derivatives set height = 9 where object_id = ${target.id} and variant = 'thumbnail'`);
    expect((await search()).data[0].thumbnail.height).toBe(9);
    // A row changed between the kept page's versions and its views: the search again, under one snapshot.
    await db().execute(sql`update derivatives set height = 11 where object_id = ${target.id} and variant = 'thumbnail'`);
    changedInBetween = 1;
    const found = await search();
    expect(changedInBetween).toBe(0);
    expect(found.data[0].thumbnail.height).toBe(11);
    expect(found.total).toBe(1);
    await agreesWithGet(found);
  });
});

describe("a search's page", () => {
  test("takes kept views; a change to a view is in the next answer; a row changed between the two statements is read again", async () => {
    // A page none of whose views is kept: written with their versions in one statement, then kept.
    const fresh = await upload(org.admin, bucket.id, "kept/fresh-9.png", await png(20, 20), { contentType: "image/png" });
    await eventually(async () => ((await org.admin.get(`/api/media/${fresh.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "the fresh thumbnail" });
    expect(viewCacheFor(db()).holdsAny([fresh.id])).toBe(false);
    const cold = (await org.admin.get(`/api/search?q=fresh-9&bucketId=${bucket.id}`)).body;
    expect(cold.media.map((o: Row) => o.id)).toEqual([fresh.id]);
    await agreesWithGet({ data: cold.media });
    expect(viewCacheFor(db()).holdsAny([fresh.id])).toBe(true);
    await org.admin.delete(`/api/media/${fresh.id}`);
    const target = objects[3]!;
    const search = async () => (await org.admin.get(`/api/search?q=photo-3&bucketId=${bucket.id}`)).body;
    const first = await search();
    expect(first.media.map((o: Row) => o.id)).toEqual([target.id]);
    expect(await search()).toEqual(first);
    await db().execute(sql`update media_objects set info = info || '{"searched": 1}'::jsonb where id = ${target.id}`);
    expect((await search()).media[0].info.searched).toBe(1);
    await db().execute(sql`update media_objects set info = info || '{"searched": 2}'::jsonb where id = ${target.id}`);
    changedInBetween = 1;
    const again = await search();
    expect(changedInBetween).toBe(0);
    expect(again.media[0].info.searched).toBe(2);
    await agreesWithGet({ data: again.media });
  });
});

describe("keptViews", () => {
  const versionsOf = async (ids: string[]) =>
    rowsOf<{ versions: string }>(
      await db().execute(sql`select string_agg(o.id::text || '/' || o.xmin::text || '/' || o.ctid::text || '/' || coalesce(d.xmin::text || '/' || d.ctid::text, ''), ' ' order by u.ord) as versions
        from unnest(${`{${ids.join(",")}}`}::uuid[]) with ordinality u(id, ord) join media_objects o on o.id = u.id
        left join derivatives d on d.object_id = o.id and d.variant = 'thumbnail'`),
    )[0]!.versions;
  // The service's own statement (its name answers through the hook above, unchanged while changedInBetween is 0).
  const versioned = VERSIONED_BY_ID;

  test("views as written, kept by version; a changed row is written again; a version no row has, or another organization's, gives null", async () => {
    const ids = objects.slice(0, 2).map((o) => o.id);
    const versions = await versionsOf(ids);
    const got = await keptViews(db(), org.orgId, versions, versioned);
    expect(got?.ids).toBe(ids.join(","));
    expect(JSON.parse(got!.views).map((v: Row) => v.id)).toEqual(ids);
    await db().execute(sql`update media_objects set metadata = '{"moved": "on"}'::jsonb where id = ${ids[1]!}`);
    const now = await keptViews(db(), org.orgId, await versionsOf(ids), versioned);
    expect(JSON.parse(now!.views)[1].metadata).toEqual({ moved: "on" });
    // The page was read before a change the views statement then saw: the caller reads both again.
    const stale = (await versionsOf([ids[0]!])).replace(/^([^/]+)\/\d+\//, "$1/1/");
    expect(await keptViews(db(), org.orgId, stale, versioned)).toBeNull();
    // A version never kept is written only for the organization asking (the versions a caller
    // passes come from its own organization's page; a kept view is looked up by version alone).
    await db().execute(sql`update media_objects set metadata = '{"moved": "again"}'::jsonb where id = ${ids[0]!}`);
    const other = await newOrg(server);
    expect(await keptViews(db(), other.orgId, await versionsOf([ids[0]!]), versioned)).toBeNull();
    expect(JSON.parse((await keptViews(db(), org.orgId, await versionsOf([ids[0]!]), versioned))!.views)[0].metadata).toEqual({ moved: "again" });
  });
});

describe("viewsWithVersions", () => {
  test("a page whose views are not kept: every view written with its version, in one statement, and kept", async () => {
    const [a, b] = objects as [Row, Row];
    const page = sql`select o.*, ${rowVersionOf(sql`o`)} as row_version, u.ord from unnest(string_to_array(${sql.placeholder("ids")}, ',')::uuid[]) with ordinality u(id, ord) join media_objects o on o.id = u.id`;
    const statement = preparedSql(db(), "test_views_with_versions", () => viewsWithVersions(page, sql`v.ord`));
    const entries = rowsOf<{ entries: string }>(await statement.execute({ ids: `${b.id},${a.id}` }))[0]!.entries;
    const split = entries.split("\x02").map((e) => e.split("\x01"));
    expect(split.map((e) => [e[0], e[1], JSON.parse(e[2]!).id])).toEqual([
      [await versionOf(b.id), "1", b.id],
      [await versionOf(a.id), "1", a.id],
    ]);
    const found = viewsOfEntries(db(), entries);
    expect(found.ids).toBe(`${b.id},${a.id}`);
    expect(viewCacheFor(db()).get(await versionOf(a.id))?.text).toBe(split[1]![2]);
  });
});

describe("ViewCache", () => {
  test("a view not asked for ten minutes is gone; past the byte bound the least recently used go first", () => {
    let now = 0;
    const cache = new ViewCache(() => now);
    cache.set("a", "x", false);
    now = 9 * 60_000;
    expect(cache.get("a")?.text).toBe("x");
    now = 10 * 60_000 + 1;
    expect(cache.get("a")).toBeUndefined();
    expect(cache.stats).toEqual({ views: 0, bytes: 0, objects: 0 });
    const mib = "y".repeat(512 * 1024);
    for (let i = 0; i < 20; i++) cache.set(`v${i}`, mib, false);
    expect(cache.stats.bytes).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(cache.get("v0")).toBeUndefined();
    expect(cache.get("v19")?.text).toBe(mib);
  });
});
