import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The repository stands alone: its comments and documents state the rules they follow (or
 * point at docs/), never at a document or tracker outside the tree, and the docs they point
 * at exist.
 */
const root = resolve(import.meta.dir, "../..");
const SKIP = new Set(["node_modules", ".git", ".data", "dist"]);

function trackedFiles(): string[] {
  // What git would commit (ignored files, such as a local note beside the checkout, are not the repository's).
  const git = Bun.spawnSync(["git", "ls-files", "--cached", "--others", "--exclude-standard"], { cwd: root });
  if (git.exitCode === 0) return git.stdout.toString().split("\n").filter(Boolean);
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (SKIP.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(relative(root, path));
    }
  };
  walk(root);
  return out;
}

const files = trackedFiles().filter((f) => /\.(ts|md)$/.test(f) && existsSync(join(root, f)));
const text = new Map(files.map((f) => [f, readFileSync(join(root, f), "utf8")]));

describe("the repository stands alone", () => {
  test("was read", () => {
    expect(files).toContain("README.md");
    expect(files).toContain("docs/conventions.md");
  });

  test("nothing cites a document or tracker outside the tree", () => {
    const outside = /ARCHITECTURE\.md|STYLE\.md|spec\/media|\bspec §|§\s?\d|\bissue \d+\b/i;
    const found: string[] = [];
    for (const [file, body] of text) {
      if (file === "test/contract/standalone.test.ts") continue;
      body.split("\n").forEach((line, i) => {
        if (outside.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
      // The same, cut by a comment's line break: "(issue" at one line's end, "18)" at the next's start.
      for (const m of body.matchAll(/\bissue[ \t]*\n[ \t]*(?:\*|\/\/|#)?[ \t]*\d+\b/gi)) found.push(`${file}: ${m[0].replace(/\s+/g, " ")}`);
    }
    expect(found).toEqual([]);
  });

  test("relative links in the documents lead to files of the tree", () => {
    const broken: string[] = [];
    for (const [file, body] of text) {
      if (!file.endsWith(".md")) continue;
      for (const [, target] of body.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:|^#/.test(target!)) continue;
        const path = target!.split("#")[0]!;
        if (!existsSync(resolve(root, dirname(file), path))) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("the docs pages that comments name exist", () => {
    const missing: string[] = [];
    for (const [file, body] of text) {
      for (const [page] of body.matchAll(/\bdocs\/[\w-]+\.md/g)) if (!existsSync(join(root, page))) missing.push(`${file}: ${page}`);
    }
    expect(missing).toEqual([]);
  });
});
