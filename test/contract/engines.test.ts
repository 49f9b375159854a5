import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * What the README ("What it needs, and its ports") and `package.json`'s `engines` promise about
 * Node. The service, the worker, the CLI and the tests run under the Bun of node_modules; Node
 * runs only npm, install scripts and a few tools. So the declared range is exactly the Node
 * versions those tools accept, and the packages that ask for more (npm's EBADENGINE warnings)
 * are the ones the README names as harmless, none of which Node ever runs.
 */
const root = join(import.meta.dir, "../..");
const json = (path: string) => JSON.parse(readFileSync(join(root, path), "utf8"));
const declared: string = json("package.json").engines.node;

/** Packages run by Node itself: install scripts (bun's, sharp's) and the tools invoked with `node` or a node shebang. */
const RUN_BY_NODE = [
  "node_modules/bun",
  "node_modules/sharp",
  "node_modules/@redocly/cli",
  "node_modules/typescript",
  "node_modules/drizzle-kit",
  "test/clients/node_modules/openapi-typescript",
];

/** Node releases either side of every bound that matters here. */
const RELEASES = ["18.20.8", "20.9.0", "20.17.0", "20.18.3", "20.19.0", "20.20.2", "21.7.3", "22.9.0", "22.11.0", "22.12.0", "22.13.0", "24.0.0", "26.0.0"];

describe("the Node that npm install and the tools need (package.json engines)", () => {
  test("the declared range admits exactly the releases every package run under Node accepts", () => {
    const ranges = RUN_BY_NODE.filter((dir) => existsSync(join(root, dir, "package.json")))
      .map((dir) => json(`${dir}/package.json`).engines?.node as string | undefined)
      .filter((r): r is string => Boolean(r));
    expect(ranges.length).toBeGreaterThan(0);
    const works = (v: string) => ranges.every((r) => Bun.semver.satisfies(v, r));
    expect(RELEASES.map((v) => [v, Bun.semver.satisfies(v, declared)])).toEqual(RELEASES.map((v) => [v, works(v)]));
  });

  test("the packages npm warns about on the lowest declared Node are only those the README names as harmless", () => {
    const lowest = RELEASES.find((v) => Bun.semver.satisfies(v, declared))!;
    const lock = json("package-lock.json").packages as Record<string, { engines?: { node?: string }; optional?: boolean }>;
    const warned = Object.entries(lock)
      .filter(([path, p]) => path && !p.optional && p.engines?.node && !Bun.semver.satisfies(lowest, p.engines.node))
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
    const named = (name: string) => name.startsWith("@scalar/") || name === "pdfjs-dist" || name === "content-type";
    expect(warned.filter((name) => !named(name))).toEqual([]);
    // And none of them is among what Node runs.
    expect(RUN_BY_NODE.filter((dir) => warned.some((name) => dir.endsWith(`node_modules/${name}`)))).toEqual([]);
  });
});
