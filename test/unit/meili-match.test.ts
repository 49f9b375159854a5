import { describe, expect, test } from "bun:test";
import { indexSettings, MATCH_REQUEST, meiliMatch } from "../../search/meili-translate.ts";

describe("Meilisearch matches", () => {
  test("the text inside files is searched last, after metadata", () => {
    expect(indexSettings(10_000).searchableAttributes).toEqual(["keyWords", "fileName", "labels", "meta", "text"]);
  });

  test("a hit says where it matched and carries the marked text, HTML-escaped", () => {
    const { highlightPreTag: a, highlightPostTag: z } = MATCH_REQUEST;
    const m = meiliMatch({
      id: "x",
      _matchesPosition: { keyWords: [{ start: 0, length: 4 }], text: [{ start: 10, length: 4 }] },
      _formatted: { text: `…due to ${a}ACME${z} & <b>co</b>…` },
    });
    expect(m).toEqual({ id: "x", in: ["name", "text"], page: null, snippet: "…due to <mark>ACME</mark> &amp; &lt;b&gt;co&lt;/b&gt;…" });
  });

  test("no match position, no field; a metadata match gets its snippet", () => {
    expect(meiliMatch({ id: "y" })).toEqual({ id: "y", in: [], page: null, snippet: null });
    const { highlightPreTag: a, highlightPostTag: z } = MATCH_REQUEST;
    expect(meiliMatch({ id: "y", _matchesPosition: { meta: [] }, _formatted: { meta: `taken at ${a}Oslo${z}` } }).snippet).toBe("taken at <mark>Oslo</mark>");
  });
});
