/**
 * The search query language (README "Search"): words must all match; "a phrase" matches
 * adjacent words; -word or -"a phrase" excludes; word* matches a prefix; OR between two
 * clauses matches either. Anything else is plain text. Parsing is ours; each backend
 * translates the result (search/postgres.ts, search/meilisearch.ts).
 */
export type Clause =
  | { type: "term"; text: string; prefix: boolean }
  | { type: "phrase"; text: string }
  | { type: "not"; clause: Clause }
  | { type: "or"; clauses: Clause[] };

export interface ParsedQuery {
  /** Every clause must hold. */
  clauses: Clause[];
}

/**
 * What one query may ask of the index (2026 attack run: a 32-way prefix query over 100k objects took
 * 2.3 s, and twenty of them at once held every connection of the pool). Each word, phrase and
 * prefix is one index scan; a prefix scans every indexed word it begins, so a short one reads
 * a large part of the index. Past these a query is refused with 400, never cut silently.
 */
export const QUERY_LIMITS = { terms: 16, prefixes: 4, alternatives: 8, prefixMinChars: 2 } as const;

/** Characters that carry no meaning for matching; a term made only of them is dropped. */
const hasWordChar = (s: string) => /[\p{L}\p{N}]/u.test(s);

export function parseQuery(input: string): ParsedQuery {
  const tokens = tokenize(input);
  const clauses: Clause[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type === "or") continue;
    let clause = token.clause;
    // a OR b OR c folds into one clause
    while (tokens[i + 1]?.type === "or" && tokens[i + 2]?.type === "clause") {
      const next = (tokens[i + 2] as { clause: Clause }).clause;
      clause = clause.type === "or" ? { type: "or", clauses: [...clause.clauses, next] } : { type: "or", clauses: [clause, next] };
      i += 2;
    }
    clauses.push(clause);
  }
  return { clauses };
}

/** Why a parsed query is too costly to run, as messages for the `q` field; empty when it is fine. */
export function complexityProblems(q: ParsedQuery): string[] {
  const leaves: Clause[] = [];
  let alternatives = 0;
  const walk = (c: Clause) => {
    if (c.type === "not") walk(c.clause);
    else if (c.type === "or") {
      alternatives += c.clauses.length;
      c.clauses.forEach(walk);
    } else leaves.push(c);
  };
  q.clauses.forEach(walk);
  const prefixes = leaves.filter((c) => c.type === "term" && c.prefix) as Array<{ text: string }>;
  const problems: string[] = [];
  const L = QUERY_LIMITS;
  if (leaves.length > L.terms) problems.push(`The query has ${leaves.length} words and phrases; at most ${L.terms} are allowed`);
  if (prefixes.length > L.prefixes) problems.push(`The query has ${prefixes.length} prefix terms (word*); at most ${L.prefixes} are allowed`);
  if (alternatives > L.alternatives) problems.push(`The query has ${alternatives} alternatives joined by OR; at most ${L.alternatives} are allowed`);
  const short = prefixes.find((p) => (p.text.match(/[\p{L}\p{N}]/gu) ?? []).length < L.prefixMinChars);
  if (short) problems.push(`A prefix term needs at least ${L.prefixMinChars} letters or digits before the *: "${short.text}*" would match most of the index`);
  return problems;
}

/** True when the query can match something: at least one clause that is not a negation. */
export function hasPositiveClause(q: ParsedQuery): boolean {
  return q.clauses.some((c) => c.type !== "not");
}

type Token = { type: "or" } | { type: "clause"; clause: Clause };

function tokenize(input: string): Token[] {
  const out: Token[] = [];
  const re = /(-?)"([^"]*)"?|(\S+)/gu;
  for (const m of input.normalize("NFC").matchAll(re)) {
    const [, neg, phrase, word] = m;
    let clause: Clause | null = null;
    if (phrase !== undefined) {
      const text = phrase.trim().replace(/\s+/g, " ");
      if (hasWordChar(text)) clause = { type: "phrase", text };
      if (clause && neg) clause = { type: "not", clause };
    } else if (word !== undefined) {
      if (word === "OR") {
        out.push({ type: "or" });
        continue;
      }
      const negated = word.length > 1 && word.startsWith("-");
      const raw = negated ? word.slice(1) : word;
      const prefix = raw.length > 1 && raw.endsWith("*");
      const text = prefix ? raw.slice(0, -1) : raw;
      if (hasWordChar(text)) clause = { type: "term", text, prefix };
      if (clause && negated) clause = { type: "not", clause };
    }
    if (clause) out.push({ type: "clause", clause });
  }
  // A dangling OR (at either end, or doubled) means nothing.
  return out.filter((t, i) => t.type !== "or" || (out[i - 1]?.type === "clause" && out[i + 1]?.type === "clause"));
}
