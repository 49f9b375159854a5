import { describe, expect, test } from "bun:test";
import { hasPositiveClause, parseQuery } from "../../domain/search/query.ts";

describe("search query parsing", () => {
  test("plain words are required terms", () => {
    expect(parseQuery("beach  sunset").clauses).toEqual([
      { type: "term", text: "beach", prefix: false },
      { type: "term", text: "sunset", prefix: false },
    ]);
  });
  test("phrases, negation and prefixes", () => {
    expect(parseQuery('"golden hour" -night -"blue sky" sun*').clauses).toEqual([
      { type: "phrase", text: "golden hour" },
      { type: "not", clause: { type: "term", text: "night", prefix: false } },
      { type: "not", clause: { type: "phrase", text: "blue sky" } },
      { type: "term", text: "sun", prefix: true },
    ]);
  });
  test("OR joins neighbours; dangling ORs are ignored; lowercase or is a word", () => {
    expect(parseQuery("beach OR sea OR lake dog").clauses).toEqual([
      {
        type: "or",
        clauses: [
          { type: "term", text: "beach", prefix: false },
          { type: "term", text: "sea", prefix: false },
          { type: "term", text: "lake", prefix: false },
        ],
      },
      { type: "term", text: "dog", prefix: false },
    ]);
    expect(parseQuery("OR cat OR").clauses).toEqual([{ type: "term", text: "cat", prefix: false }]);
    expect(parseQuery("cat or dog").clauses).toHaveLength(3);
  });
  test("punctuation-only pieces are dropped; unicode words are kept; an unclosed quote is a phrase", () => {
    expect(parseQuery("- * ... café 東京").clauses).toEqual([
      { type: "term", text: "café", prefix: false },
      { type: "term", text: "東京", prefix: false },
    ]);
    expect(parseQuery('"open ended').clauses).toEqual([{ type: "phrase", text: "open ended" }]);
  });
  test("a query of negations only has no positive clause", () => {
    expect(hasPositiveClause(parseQuery("-a -b"))).toBe(false);
    expect(hasPositiveClause(parseQuery("a -b"))).toBe(true);
    expect(hasPositiveClause(parseQuery("***"))).toBe(false);
  });
  test("at most 32 clauses", () => {
    expect(parseQuery(Array.from({ length: 50 }, (_, i) => `w${i}`).join(" ")).clauses).toHaveLength(32);
  });
});
