import { describe, expect, test } from "bun:test";
import type { SearchRequest } from "../../domain/ports/search.ts";
import { parseQuery } from "../../domain/search/query.ts";
import { indexSettings, meiliFilter, meiliPaging, meiliQuery, toFacets, totalOf } from "../../search/meili-translate.ts";

const base: SearchRequest = {
  orgId: "11111111-1111-4111-8111-111111111111",
  query: parseQuery("x"),
  bucketId: null,
  kind: null,
  tagIds: [],
  categoryGroups: [],
  sizeMin: null,
  sizeMax: null,
  dateFrom: null,
  dateBefore: null,
  limit: 50,
  offset: 0,
  exactUpTo: 10_000,
};

describe("Meilisearch translation", () => {
  test("query: words, phrases, negations; a prefix term goes last; OR words become required", () => {
    expect(meiliQuery(parseQuery('sun* beach "golden hour" -night -"blue sky"'))).toBe('beach "golden hour" -night -"blue sky" sun');
    expect(meiliQuery(parseQuery("img_2026.jpg"))).toBe("img 2026 jpg");
    expect(meiliQuery(parseQuery("waves OR ocean"))).toBe("waves ocean");
    expect(meiliQuery(parseQuery('"quote \\" inside"'))).toBe('"quote" inside');
  });
  test("filter: always the organization; every filter ANDed; categories as groups", () => {
    expect(meiliFilter(base)).toBe('orgId = "11111111-1111-4111-8111-111111111111"');
    const full = meiliFilter({
      ...base,
      bucketId: "22222222-2222-4222-8222-222222222222",
      kind: "image",
      tagIds: ["t1", "t2"],
      categoryGroups: [["c1", "c2"], ["c3"]],
      sizeMin: 10,
      sizeMax: 20,
      dateFrom: new Date(1000),
      dateBefore: new Date(2000),
    });
    expect(full).toBe(
      'orgId = "11111111-1111-4111-8111-111111111111" AND bucketId = "22222222-2222-4222-8222-222222222222" AND kind = "image" AND tagIds = "t1" AND tagIds = "t2" AND categoryIds IN ["c1", "c2"] AND categoryIds IN ["c3"] AND size >= 10 AND size <= 20 AND createdAt >= 1000 AND createdAt < 2000',
    );
  });
  test("paging: always page mode (exact totals and facets); an unaligned offset is a first page with the head skipped", () => {
    expect(meiliPaging(50, 0)).toEqual({ page: 1, hitsPerPage: 50, skip: 0 });
    expect(meiliPaging(20, 40)).toEqual({ page: 3, hitsPerPage: 20, skip: 0 });
    expect(meiliPaging(20, 5)).toEqual({ page: 1, hitsPerPage: 25, skip: 5 });
  });
  test("totals: exact up to the limit, a lower bound past it (maxTotalHits is the limit + 1)", () => {
    expect(indexSettings(10_000).pagination).toEqual({ maxTotalHits: 10_001 });
    expect(totalOf(0, 10_000)).toEqual({ total: 0, totalRelation: "eq" });
    expect(totalOf(10_000, 10_000)).toEqual({ total: 10_000, totalRelation: "eq" });
    expect(totalOf(10_001, 10_000)).toEqual({ total: 10_000, totalRelation: "gte" });
  });
  test("facet values are kept by count, not alphabetically, 100 per facet as the PostgreSQL backend", () => {
    expect(indexSettings(10).faceting).toEqual({ maxValuesPerFacet: 100, sortFacetValuesBy: { "*": "count" } });
  });
  test("facets: ids become slugs and names, most frequent first; unknown ids are dropped", () => {
    const facets = toFacets(
      { tagIds: { a: 2, b: 5, gone: 9 }, categoryIds: { c: 1 }, kind: { image: 3, video: 4 } },
      {
        tags: new Map([
          ["a", { slug: "alpha", name: "Alpha" }],
          ["b", { slug: "beta", name: "Beta" }],
        ]),
        categories: new Map([["c", { slug: "cat", name: "Cat" }]]),
      },
    );
    expect(facets).toEqual({
      tags: [
        { slug: "beta", name: "Beta", count: 5 },
        { slug: "alpha", name: "Alpha", count: 2 },
      ],
      categories: [{ slug: "cat", name: "Cat", count: 1 }],
      kinds: [
        { kind: "video", count: 4 },
        { kind: "image", count: 3 },
      ],
    });
  });
});
