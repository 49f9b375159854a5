import { describe, expect, test } from "bun:test";
import { indexSettings, meiliFilter } from "../../search/meili-translate.ts";
import { parseQuery } from "../../domain/search/query.ts";
import type { SearchRequest } from "../../domain/ports/search.ts";

describe("Meilisearch: the color filter", () => {
  const req = (facts: SearchRequest["facts"]): SearchRequest => ({
    orgId: "6f0b7f4f-52de-47c1-9fe9-6185f8725212",
    query: parseQuery("door"),
    bucketId: null,
    kind: null,
    tagIds: [],
    categoryGroups: [],
    sizeMin: null,
    sizeMax: null,
    dateFrom: null,
    dateBefore: null,
    facts,
    limit: 20,
    offset: 0,
    exactUpTo: 10_000,
  });

  test("the three CIELAB numbers are filterable, and a colour is the cube of its tolerance around it", () => {
    expect(indexSettings(10_000).filterableAttributes).toEqual(expect.arrayContaining(["colorL", "colorA", "colorB"]));
    const filter = meiliFilter(req({ color: { orgId: "6f0b7f4f-52de-47c1-9fe9-6185f8725212", l: 50, a: 60, b: -10, tolerance: 20 } }));
    expect(filter).toContain("colorL 30 TO 70");
    expect(filter).toContain("colorA 40 TO 80");
    expect(filter).toContain("colorB -30 TO 10");
    expect(meiliFilter(req(null))).not.toContain("color");
  });
});
