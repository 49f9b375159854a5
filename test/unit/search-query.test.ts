import { describe, expect, test } from "bun:test";
import { complexityProblems, hasPositiveClause, parseQuery } from "../../domain/search/query.ts";

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
  test("every clause is kept (a costly query is refused, never cut)", () => {
    expect(parseQuery(Array.from({ length: 50 }, (_, i) => `w${i}`).join(" ")).clauses).toHaveLength(50);
  });
});

describe("query complexity", () => {
  const problems = (q: string) => complexityProblems(parseQuery(q));
  test("ordinary queries pass", () => {
    expect(problems('"golden hour" -night beach OR sea sun* mo*')).toEqual([]);
    expect(problems(Array.from({ length: 16 }, (_, i) => `w${i}`).join(" "))).toEqual([]);
  });
  test("more than 16 words and phrases, counted inside OR and negations", () => {
    expect(problems(Array.from({ length: 17 }, (_, i) => `w${i}`).join(" "))[0]).toContain("at most 16");
    expect(problems(Array.from({ length: 9 }, (_, i) => `-w${i} x${i}`).join(" "))[0]).toContain("18 words");
  });
  test("more than 4 prefix terms", () => {
    expect(problems("ab* cd* ef* gh*")).toEqual([]);
    expect(problems("ab* cd* ef* gh* ij*")).toEqual(["The query has 5 prefix terms (word*); at most 4 are allowed"]);
    expect(problems("ab* OR cd* OR ef* OR gh* OR ij*").some((m) => m.includes("prefix terms"))).toBe(true);
  });
  test("more than 8 alternatives joined by OR", () => {
    expect(problems(Array.from({ length: 8 }, (_, i) => `w${i}`).join(" OR "))).toEqual([]);
    expect(problems(Array.from({ length: 9 }, (_, i) => `w${i}`).join(" OR "))).toEqual(["The query has 9 alternatives joined by OR; at most 8 are allowed"]);
  });
  test("a prefix of one character", () => {
    expect(problems("a*")[0]).toContain("at least 2 letters or digits");
    expect(problems("sunset a*")[0]).toContain('"a*"');
  });
});
