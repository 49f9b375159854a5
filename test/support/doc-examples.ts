import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * The examples of the README and docs/, as the doc-example test runs them. The convention
 * (also written in docs/conventions.md#examples-in-these-pages):
 *
 * - ```sh and ```bash blocks are run, in page order, against a started service;
 * - ```sh checkout: run the same way, but in the repository's directory (`npx media`);
 * - ```sh norun: shell that is not run (it installs packages, starts servers, deploys);
 * - ```json blocks must parse (a fragment such as `"facets": {...}` is read inside braces);
 * - ```yaml blocks must parse;
 * - ```ts excerpt: code quoted from the repository; every line without an ellipsis must be a
 *   line of some .ts file here;
 * - ```text, and blocks without a language: output, not run.
 *
 * Any other language is an error, so a new kind of example gets a decision.
 */
export type BlockKind = "run" | "checkout" | "norun" | "json" | "yaml" | "excerpt" | "text";

export interface Block {
  file: string;
  /** Line of the opening fence, 1-based. */
  line: number;
  info: string;
  kind: BlockKind | null;
  code: string;
}

export const root = join(import.meta.dir, "../..");

/** README.md, SECURITY.md and every page under docs/, relative to the repository. */
export function documentationFiles(): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", "SECURITY.md", ...docs];
}

function kindOf(info: string): BlockKind | null {
  const [lang = "", ...attrs] = info.trim().split(/\s+/);
  if (lang === "" || lang === "text") return "text";
  if (lang === "sh" || lang === "bash") return attrs.length === 0 ? "run" : attrs.join(" ") === "norun" ? "norun" : attrs.join(" ") === "checkout" ? "checkout" : null;
  if (lang === "json" && attrs.length === 0) return "json";
  if (lang === "yaml" && attrs.length === 0) return "yaml";
  if (lang === "ts" && attrs.includes("excerpt")) return "excerpt";
  return null;
}

export function blocksOf(file: string): Block[] {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j]!.trimStart().startsWith(fence!); j++) body.push(lines[j]!.slice(Math.min(indent!.length, lines[j]!.length - lines[j]!.trimStart().length)));
    blocks.push({ file, line: i + 1, info: info!.trim(), kind: kindOf(info!), code: body.join("\n") });
    i = j;
  }
  return blocks;
}

/**
 * A shell block made ready to run here: the documented addresses (`http://127.0.0.1:3000`,
 * `localhost:3000`, and the embedded storage node's `http://127.0.0.1:9000`) become the test
 * service's, and an assignment of an elided value
 * (`export KEY=3f9c…`, a value the reader fills in) keeps the harness's value instead.
 */
export function prepareShell(code: string, serviceUrl: string, storageUrl: string): string {
  const hostPort = serviceUrl.replace(/^https?:\/\//, "");
  return code
    .replaceAll("http://127.0.0.1:3000", serviceUrl)
    .replaceAll("http://127.0.0.1:9000", storageUrl)
    .replaceAll("localhost:3000", hostPort)
    .split("\n")
    .map((line) => line.replace(/^(\s*)(?:export\s+)?([A-Za-z_]\w*)=\S*…\S*(.*)$/, (_m, indent, name, rest) => `${indent}: "$${name}" provided by the examples harness${rest}`))
    .join("\n");
}

/** Every line of the repository's TypeScript, trimmed, for excerpt checks. */
export function repositoryLines(): Set<string> {
  const out = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name)) for (const line of readFileSync(path, "utf8").split("\n")) out.add(line.trim());
    }
  };
  walk(root);
  return out;
}

export function where(block: Block): string {
  return `${relative(root, join(root, block.file))}:${block.line}`;
}
