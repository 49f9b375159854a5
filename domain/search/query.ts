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

const MAX_CLAUSES = 32;

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
    if (clauses.length >= MAX_CLAUSES) break;
  }
  return { clauses };
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
