import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Claim, normalise, type PageClaims, PROMISE } from "../claims/claim.ts";
import { documentationFiles, root } from "../support/doc-examples.ts";
import { testEnv } from "../support/env.ts";
import { startServer, type TestServer } from "../support/server.ts";

/**
 * The promise audit (test/claims/claim.ts): every line of README.md, SECURITY.md and docs/
 * that names a status code, a limit, a header or a number is backed by a test or says why it
 * is not a promise; quotes and the tests they name stay true as the pages and tests change.
 */
const claimFiles = readdirSync(join(root, "test/claims")).filter((f) => f.endsWith(".ts") && f !== "claim.ts").sort();
const pages: PageClaims[] = await Promise.all(claimFiles.map(async (f) => (await import(join(root, "test/claims", f))).default as PageClaims));

/** A page's prose as one normalised string, with each line's span in it (code blocks left out). */
function prose(page: string): { text: string; lines: { line: number; raw: string; start: number; end: number }[] } {
  const raw = readFileSync(join(root, page), "utf8").split("\n");
  let text = "";
  const lines: { line: number; raw: string; start: number; end: number }[] = [];
  let fence: string | null = null;
  raw.forEach((l, i) => {
    const open = /^\s*(`{3,})/.exec(l);
    if (open) {
      if (fence === null) fence = open[1]!;
      else if (l.trim().startsWith(fence)) fence = null;
      return;
    }
    if (fence !== null) return;
    const n = normalise(l);
    if (!n) return;
    if (text) text += " ";
    lines.push({ line: i + 1, raw: l, start: text.length, end: text.length + n.length });
    text += n;
  });
  return { text, lines };
}

describe("the promise audit", () => {
  test("every page with promises has its claims file, and every claims file a page", () => {
    const covered = new Set(pages.map((p) => p.page));
    for (const p of pages) expect(existsSync(join(root, p.page)), `${p.page} (a claims file names a page that does not exist)`).toBe(true);
    const missing = documentationFiles().filter((f) => !covered.has(f) && prose(f).lines.some((l) => PROMISE.some((re) => re.test(l.raw))));
    expect(missing, "pages with promise-like lines but no test/claims file").toEqual([]);
    // What the audit covers, in the run's output.
    const claims = pages.flatMap((p) => p.claims);
    const notPromises = pages.reduce((n, p) => n + (p.notPromises?.length ?? 0), 0);
    console.log(
      `the promise audit: ${claims.length} claims on ${pages.length} pages (${claims.filter((c) => c.by).length} backed by a named test, ${claims.filter((c) => c.check).length} by a live check), ${notPromises} promise-like lines said not to be promises`,
    );
    expect(claims.length).toBeGreaterThan(0);
  });

  for (const p of pages) {
    describe(p.page, () => {
      const { text, lines } = existsSync(join(root, p.page)) ? prose(p.page) : { text: "", lines: [] };

      test("every quote is still in the page", () => {
        const gone = [...p.claims, ...(p.notPromises ?? [])].map((c) => c.says).filter((s) => !text.includes(normalise(s)));
        expect(gone, "quotes no longer in the page: update the claim with the page").toEqual([]);
      });

      test("every test named as backing a claim exists", () => {
        const missing = p.claims
          .filter((c) => c.by)
          .filter((c) => {
            const file = join(root, c.by!.file);
            return !existsSync(file) || !readFileSync(file, "utf8").includes(c.by!.test);
          })
          .map((c) => `${c.by!.file}: "${c.by!.test}" (for "${c.says}")`);
        expect(missing).toEqual([]);
      });

      test("every claim is backed by a test or a check", () => {
        expect(p.claims.filter((c) => !c.by && !c.check).map((c) => c.says)).toEqual([]);
      });

      test("no promise-like line is left out", () => {
        const spans: [number, number][] = [];
        for (const c of [...p.claims, ...(p.notPromises ?? [])]) {
          const q = normalise(c.says);
          for (let at = text.indexOf(q); at >= 0; at = text.indexOf(q, at + 1)) spans.push([at, at + q.length]);
        }
        const uncovered = lines
          .filter((l) => PROMISE.some((re) => re.test(l.raw)))
          .filter((l) => !spans.some(([s, e]) => s < l.end && e > l.start))
          .map((l) => `${p.page}:${l.line}: ${l.raw.trim()}`);
        expect(uncovered, "lines that look like promises: add a claim (backed by a test) or a notPromise (with why)").toEqual([]);
      });
    });
  }
});

// The live checks run against the embedded backends, so they run once, in the embedded pass
// (the services pass would repeat the same checks on the same backends).
describe.skipIf(testEnv.mode !== "embedded")("the promise audit's live checks", () => {
  let server: Promise<TestServer> | undefined;
  const shared = () => (server ??= startServer({ embedded: true }));
  const live = pages.flatMap((p) => p.claims.filter((c) => c.check).map((c) => ({ page: p.page, claim: c })));
  // A long check (`beside`, on a server of its own) starts with the first one and runs beside
  // the rest, so the audit takes about as long as its longest check, not their sum.
  const running = new Map<Claim, Promise<void>>();
  const begin = (claim: Claim): Promise<void> => {
    let run = running.get(claim);
    if (!run) {
      run = shared().then((s) => claim.check!(s));
      run.catch(() => {});
      running.set(claim, run);
    }
    return run;
  };
  afterAll(async () => {
    await Promise.allSettled(running.values());
    if (server) await (await server).stop();
  });
  for (const { page, claim } of live) {
    test(`${page}: ${claim.says}`, async () => {
      for (const l of live) if (l.claim.beside) void begin(l.claim);
      await begin(claim);
    }, 120_000);
  }
});
