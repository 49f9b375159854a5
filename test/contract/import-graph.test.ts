import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The source tree's import graph, type-only imports included: no file may import one that
 * imports it back (directly or round a longer loop), and the layers only import downwards.
 */
const root = resolve(import.meta.dir, "../..");
const SKIP = new Set(["node_modules", ".git", ".data", "test", "bench", "dist"]);

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name) || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (/\.tsx?$/.test(entry.name)) out.push(path);
  }
  return out;
}

const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
const graph = new Map<string, string[]>();
for (const file of sourceFiles(root)) {
  const targets = [...readFileSync(file, "utf8").matchAll(IMPORT)].map((m) => resolve(dirname(file), m[1]!)).filter((t) => /\.tsx?$/.test(t));
  graph.set(relative(root, file), targets.map((t) => relative(root, t)));
}

/** Strongly connected components of more than one file (Tarjan): each is an import circle. */
function circles(): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(part.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** What each layer may not import: domain and contract know no surface, tools know no transport. */
const FORBIDDEN: Record<string, string[]> = {
  "contract/": ["domain/", "db/", "tools/", "rest/", "mcp/", "openapi/", "http/", "cli/", "app/", "worker/", "storage/", "search/", "payments/"],
  "domain/": ["tools/", "rest/", "mcp/", "openapi/", "http/", "cli/", "app/", "worker/", "storage/", "search/", "payments/", "net/"],
  // Outbound requests to user-given URLs: a leaf any adapter may use, knowing nothing of the service.
  "net/": ["contract/", "domain/", "db/", "tools/", "rest/", "mcp/", "openapi/", "http/", "cli/", "app/", "worker/", "storage/", "search/", "payments/"],
  "db/": ["domain/", "tools/", "rest/", "mcp/", "openapi/", "http/", "cli/", "app/", "worker/"],
  "tools/": ["rest/", "mcp/", "openapi/", "http/", "cli/", "app/", "worker/"],
  "rest/": ["mcp/", "openapi/", "cli/", "app/"],
  "mcp/": ["rest/", "openapi/", "cli/", "app/"],
  "openapi/": ["rest/", "mcp/", "cli/", "app/"],
  // The web console is a client: it reaches the service over HTTP, never through its insides.
  "console/app/": ["db/", "rest/", "mcp/", "openapi/", "http/", "app/", "worker/", "storage/", "search/", "payments/"],
};

describe("import graph", () => {
  test("was read (the walk finds the tree)", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.has("tools/registry.ts")).toBe(true);
  });

  test("no file imports one that imports it back", () => {
    expect(circles()).toEqual([]);
  });

  test("layers import downwards only", () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      const layer = Object.keys(FORBIDDEN).find((l) => file.startsWith(l));
      if (!layer) continue;
      for (const t of targets) if (FORBIDDEN[layer]!.some((f) => t.startsWith(f))) wrong.push(`${file} -> ${t}`);
    }
    expect(wrong).toEqual([]);
  });
});
