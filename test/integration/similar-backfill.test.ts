import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import { planPictureBackfills } from "../../domain/media/picture-backfill.ts";
import { enqueueJob } from "../../domain/core/jobs.ts";
import { eventually } from "../support/eventually.ts";
import { withTwoOrgs } from "../support/fixtures.ts";
import { copiesOf, mostly, scene } from "../support/pictures.ts";
import type { TestOrg, TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * Objects stored before pictures were hashed: their thumbnails exist, and the organization's
 * backfill fills in the hash and the colour from them, so media_similar and the colour filter
 * find them. A second start of the backfill, or a duplicate batch job, changes nothing.
 */

type Row = Record<string, any>;

let server: TestServer;
let org: TestOrg;
let bucket: { id: string };
let objects: Row[];

const db = () => server.services.deps.db;
const facts = async (ids: string[]) =>
  rowsOf<{ object_id: string; phash: string | null; color_l: number | null }>(
    await db().execute(sql`select object_id, phash::text as phash, color_l from object_facts where object_id in (${sql.join(ids.map((id) => sql`${id}::uuid`), sql`, `)}) order by object_id`),
  );

withTwoOrgs({
  ready: async (made) => {
    ({ server, org, bucket } = made);
    objects = [];
    for (const c of (await copiesOf(await scene())).slice(0, 2)) objects.push(await upload(org.admin, bucket.id, c.name, c.bytes, { contentType: c.contentType }));
    objects.push(await upload(org.admin, bucket.id, "red.png", await mostly("#d01818"), { contentType: "image/png" }));
    for (const o of objects) {
      await eventually(async () => ((await org.admin.get(`/api/media/${o.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { what: "the thumbnail", timeoutMs: 120_000 });
    }
    // As an older release left them: thumbnails, but no hash or colour, and the run not started.
    const ids = sql.join(objects.map((o) => sql`${o.id}::uuid`), sql`, `);
    await db().execute(sql`update object_facts set phash = null, phash0 = null, phash1 = null, phash2 = null, phash3 = null, color_l = null, color_a = null, color_b = null where object_id in (${ids})`);
    await db().execute(sql`update media_objects set info = info - 'phash' where id in (${ids})`);
    await db().execute(sql`delete from backfill_runs where org_id = ${org.orgId} and kind = 'pictures'`);
  },
});

describe("picture backfill", () => {
  test("fills in the hash and colour from the thumbnails; similar and color then find the objects", async () => {
    expect((await org.admin.get(`/api/media/${objects[0]!.id}/similar`)).body.total).toBe(0);
    expect((await org.admin.get(`/api/media?color=red`)).body.total).toBe(0);
    await planPictureBackfills(server.services.deps);
    await eventually(async () => ((await facts(objects.map((o) => o.id))).every((f) => f.phash !== null && f.color_l !== null) ? true : undefined), {
      what: "the backfill",
      timeoutMs: 60_000,
    });
    const similar = (await org.admin.get(`/api/media/${objects[0]!.id}/similar`)).body;
    expect(similar.data.map((f: Row) => f.object.id)).toEqual([objects[1]!.id]);
    expect((await org.admin.get(`/api/media?color=red`)).body.data.map((o: Row) => o.id)).toEqual([objects[2]!.id]);
    expect(typeof (await org.admin.get(`/api/media/${objects[0]!.id}`)).body.info.phash).toBe("string");
  });

  test("started again, or with a duplicate batch job, it changes nothing", async () => {
    const before = await facts(objects.map((o) => o.id));
    const [run] = rowsOf<{ processed: number; finished_at: unknown }>(await db().execute(sql`select processed, finished_at from backfill_runs where org_id = ${org.orgId} and kind = 'pictures'`));
    expect(run!.finished_at).not.toBeNull();
    expect(run!.processed).toBe(3);
    expect(await planPictureBackfills(server.services.deps)).toBe(0);
    await enqueueJob(db(), "media.pictures", { orgId: org.orgId });
    server.services.deps.jobs.kick();
    await Bun.sleep(500);
    expect(await facts(objects.map((o) => o.id))).toEqual(before);
    const [again] = rowsOf<{ processed: number }>(await db().execute(sql`select processed from backfill_runs where org_id = ${org.orgId} and kind = 'pictures'`));
    expect(again!.processed).toBe(3);
  });
});
