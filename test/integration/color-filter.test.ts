import { describe, expect, test } from "bun:test";
import { eventually } from "../support/eventually.ts";
import { withTwoOrgs } from "../support/fixtures.ts";
import type { Api } from "../support/http.ts";
import { mostly } from "../support/pictures.ts";
import type { TestOrg } from "../support/server.ts";
import { upload } from "../support/upload.ts";

/**
 * The `color` filter on lists and search: the picture's dominant colour, compared in CIELAB
 * with a tolerance (delta E), by name or `#rrggbb`; another organization's red picture never shows.
 */

type Row = Record<string, any>;

let org: TestOrg;
let other: TestOrg;
let bucket: { id: string };
let red: Row;
let blue: Row;
let foreignRed: Row;

async function ready(api: Api, row: Row): Promise<void> {
  await eventually(async () => ((await api.get(`/api/media/${row.id}`)).body.thumbnail?.state === "ready" ? true : undefined), {
    what: `the thumbnail of ${row.key}`,
    timeoutMs: 120_000,
  });
}

withTwoOrgs({
  ready: async (made) => {
    ({ org, other, bucket } = made);
    red = await upload(org.admin, bucket.id, "paint/red-door.png", await mostly("#d01818"), { contentType: "image/png" });
    blue = await upload(org.admin, bucket.id, "paint/blue-door.png", await mostly("#1830c0"), { contentType: "image/png" });
    foreignRed = await upload(other.admin, made.otherBucket.id, "paint/red-door.png", await mostly("#d01818"), { contentType: "image/png" });
    for (const r of [red, blue]) await ready(org.admin, r);
    await ready(other.admin, foreignRed);
  },
});

const idsOf = (body: Row, field: "data" | "media") => (body[field] as Row[]).map((o) => o.id);

describe("color filter", () => {
  test("media_list: the named colour and a nearby #rrggbb find the red picture, not the blue one", async () => {
    for (const color of ["red", "%23c82020", "%23D01818"]) {
      const res = await org.admin.get(`/api/media?bucketId=${bucket.id}&color=${color}`);
      expect(res.status).toBe(200);
      expect(idsOf(res.body, "data")).toEqual([red.id]);
      expect(res.body.total).toBe(1);
    }
    expect(idsOf((await org.admin.get(`/api/media?color=blue`)).body, "data")).toEqual([blue.id]);
    expect(idsOf((await org.admin.get(`/api/media?color=green`)).body, "data")).toEqual([]);
  });

  test("the tolerance widens and narrows the match", async () => {
    // Orange is about 40 from this red: outside the default, inside a wide tolerance.
    expect(idsOf((await org.admin.get(`/api/media?color=orange`)).body, "data")).toEqual([]);
    expect(idsOf((await org.admin.get(`/api/media?color=orange&colorTolerance=70`)).body, "data")).toEqual([red.id]);
    expect(idsOf((await org.admin.get(`/api/media?color=%23c82020&colorTolerance=1`)).body, "data")).toEqual([]);
  });

  test("search: the same filter beside the words", async () => {
    const res = await org.admin.get(`/api/search?q=door&color=red`);
    expect(res.status).toBe(200);
    expect(idsOf(res.body, "media")).toEqual([red.id]);
    expect(idsOf((await org.admin.get(`/api/search?q=door&color=blue`)).body, "media")).toEqual([blue.id]);
  });

  test("another organization's red picture never appears", async () => {
    expect(idsOf((await org.admin.get(`/api/media?color=red`)).body, "data")).toEqual([red.id]);
    expect(idsOf((await other.admin.get(`/api/media?color=red`)).body, "data")).toEqual([foreignRed.id]);
    expect(idsOf((await other.admin.get(`/api/search?q=door&color=red`)).body, "media")).toEqual([foreignRed.id]);
  });

  test("bad colours are a 400 that says what is expected", async () => {
    for (const q of ["color=crimson", "color=%23ff00", "colorTolerance=5", "color=red&colorTolerance=-1"]) {
      const res = await org.admin.get(`/api/media?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
  });
});
