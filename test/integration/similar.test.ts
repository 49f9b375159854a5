import { describe, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { withTwoOrgs } from "../support/fixtures.ts";
import type { Api } from "../support/http.ts";
import { newBucket } from "../support/objects.ts";
import { copiesOf, mostly, otherScene, scene } from "../support/pictures.ts";
import type { TestOrg } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * Near-duplicates: three resized and recompressed copies of one picture are one group of a
 * bucket's duplicates and each other's similar objects; a different picture is neither; another
 * organization's copy never shows, and a key restricted to one bucket sees only that bucket.
 * Pictures of one colour with the same mark hash alike whatever the colour: only those of a
 * close colour are alike.
 */

type Row = Record<string, any>;

let org: TestOrg;
let other: TestOrg;
let bucket: { id: string };
let second: { id: string };
let copies: Row[];
let different: Row;
let inSecond: Row;
let foreignCopy: Row;
let plain: { id: string };
let plainRed: Row;
let plainDarkerRed: Row;
let plainBlue: Row;

async function ready(api: Api, row: Row): Promise<Row> {
  return eventually(
    async () => {
      const o = (await api.get(`/api/media/${row.id}`)).body;
      return o.thumbnail?.state === "ready" ? o : undefined;
    },
    { what: `the thumbnail of ${row.key}`, timeoutMs: 120_000 },
  );
}

withTwoOrgs({
  ready: async (made) => {
    ({ org, other, bucket } = made);
    second = await newBucket(org, "second");
    const made3 = await copiesOf(await scene());
    copies = [];
    for (const c of made3) copies.push(await upload(org.admin, bucket.id, `copies/${c.name}`, c.bytes, { contentType: c.contentType }));
    different = await upload(org.admin, bucket.id, "different.png", await otherScene(), { contentType: "image/png" });
    inSecond = await upload(org.admin, second.id, "copy.jpg", made3[0]!.bytes, { contentType: "image/jpeg" });
    foreignCopy = await upload(other.admin, made.otherBucket.id, "copy.jpg", made3[0]!.bytes, { contentType: "image/jpeg" });
    plain = await newBucket(org, "plain");
    plainRed = await upload(org.admin, plain.id, "red.png", await mostly("#e02020"), { contentType: "image/png" });
    plainDarkerRed = await upload(org.admin, plain.id, "darker-red.png", await mostly("#d01818"), { contentType: "image/png" });
    plainBlue = await upload(org.admin, plain.id, "blue.png", await mostly("#2050d0"), { contentType: "image/png" });
    for (const r of [...copies, different, inSecond, plainRed, plainDarkerRed, plainBlue]) await ready(org.admin, r);
    await ready(other.admin, foreignCopy);
  },
});

const ids = (rows: Row[]) => rows.map((r) => r.id).sort();

describe("media_duplicates", () => {
  test("the three copies are one group with the bytes they take; the different picture is in none", async () => {
    const res = await org.admin.get(`/api/buckets/${bucket.id}/duplicates`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(1);
    const [group] = res.body.data;
    expect(ids(group.objects)).toEqual(ids(copies));
    const sizes = copies.map((c) => c.size as number);
    expect(group.bytes).toBe(sizes.reduce((a, b) => a + b, 0));
    expect(group.reclaimable).toBe(group.bytes - Math.max(...sizes));
    expect(group.objects[0].size).toBe(Math.max(...sizes));
  });

  test("a bucket of another organization is not found; a restricted key is held to its bucket", async () => {
    expect((await other.admin.get(`/api/buckets/${bucket.id}/duplicates`)).status).toBe(404);
    const restricted = await org.keyClient(["read"], { bucketId: second.id });
    expect((await restricted.get(`/api/buckets/${bucket.id}/duplicates`)).status).toBe(403);
    expect((await restricted.get(`/api/buckets/${second.id}/duplicates`)).body).toMatchObject({ data: [], total: 0 });
  });
});

describe("media_similar", () => {
  test("a copy finds the other copies and the one in another bucket, nearest first, and not the different picture", async () => {
    const res = await org.admin.get(`/api/media/${copies[0]!.id}/similar`);
    expect(res.status).toBe(200);
    const found: Row[] = res.body.data;
    expect(ids(found.map((f) => f.object))).toEqual(ids([copies[1]!, copies[2]!, inSecond]));
    expect(res.body.total).toBe(3);
    const distances = found.map((f) => f.distance);
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
    expect(found.every((f) => f.distance <= 7 && f.object.id !== different.id)).toBe(true);
    // The very same bytes in the second bucket hash the same.
    expect(found.find((f) => f.object.id === inSecond.id)!.distance).toBe(0);
  });

  test("pages and a narrower radius", async () => {
    const first = (await org.admin.get(`/api/media/${copies[0]!.id}/similar?limit=2`)).body;
    const rest = (await org.admin.get(`/api/media/${copies[0]!.id}/similar?limit=2&offset=2`)).body;
    expect(first).toMatchObject({ total: 3, hasMore: true });
    expect(rest).toMatchObject({ total: 3, hasMore: false });
    expect([...first.data, ...rest.data].map((f: Row) => f.object.id).sort()).toEqual(ids([copies[1]!, copies[2]!, inSecond]));
    const exact = (await org.admin.get(`/api/media/${copies[0]!.id}/similar?maxDistance=0`)).body;
    expect(exact.data.map((f: Row) => f.object.id)).toContain(inSecond.id);
    expect((await org.admin.get(`/api/media/${copies[0]!.id}/similar?maxDistance=11`)).status).toBe(400);
  });

  test("another organization's copy never appears, and its ids are not found", async () => {
    const mine = (await org.admin.get(`/api/media/${copies[0]!.id}/similar?maxDistance=10`)).body;
    expect(mine.data.map((f: Row) => f.object.id)).not.toContain(foreignCopy.id);
    const theirs = (await other.admin.get(`/api/media/${foreignCopy.id}/similar?maxDistance=10`)).body;
    expect(theirs).toMatchObject({ data: [], total: 0 });
    expect((await other.admin.get(`/api/media/${copies[0]!.id}/similar`)).status).toBe(404);
  });

  test("a key restricted to one bucket sees only that bucket", async () => {
    const restricted = await org.keyClient(["read"], { bucketId: bucket.id });
    const res = await restricted.get(`/api/media/${copies[0]!.id}/similar`);
    expect(ids(res.body.data.map((f: Row) => f.object))).toEqual(ids([copies[1]!, copies[2]!]));
    expect((await restricted.get(`/api/media/${copies[0]!.id}/similar?bucketId=${second.id}`)).status).toBe(403);
    expect((await restricted.get(`/api/media/${inSecond.id}/similar`)).status).toBe(403);
  });

  test("pictures of one colour: the same mark on red and on blue hash alike, but only the two reds are similar and a duplicate group", async () => {
    const red = (await org.admin.get(`/api/media/${plainRed.id}`)).body;
    const blue = (await org.admin.get(`/api/media/${plainBlue.id}`)).body;
    // The hash alone cannot tell them apart: the colour does.
    expect(red.info.phash).toBe(blue.info.phash);
    const similar = (await org.admin.get(`/api/media/${plainRed.id}/similar?maxDistance=10`)).body;
    expect(similar.data.map((f: Row) => f.object.id)).toEqual([plainDarkerRed.id]);
    expect(similar.total).toBe(1);
    expect((await org.admin.get(`/api/media/${plainBlue.id}/similar?maxDistance=10`)).body).toMatchObject({ data: [], total: 0 });
    const groups = (await org.admin.get(`/api/buckets/${plain.id}/duplicates?maxDistance=10`)).body;
    expect(groups.data.map((g: Row) => ids(g.objects))).toEqual([ids([plainRed, plainDarkerRed])]);
  });

  test("a deleted copy leaves the answers", async () => {
    const gone = await upload(org.admin, bucket.id, "copies/again.jpg", (await copiesOf(await scene()))[0]!.bytes, { contentType: "image/jpeg" });
    await ready(org.admin, gone);
    expect((await org.admin.get(`/api/media/${copies[0]!.id}/similar`)).body.total).toBe(4);
    expect((await org.admin.delete(`/api/media/${gone.id}`)).status).toBe(200);
    expect((await org.admin.get(`/api/media/${copies[0]!.id}/similar`)).body.total).toBe(3);
    expect((await org.admin.get(`/api/buckets/${bucket.id}/duplicates`)).body.data[0].objects).toHaveLength(3);
  });
});
