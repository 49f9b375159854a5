import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";

const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

export interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. The script is
 * evaluated through the DevTools protocol, which the page's CSP does not govern, so the
 * console keeps its strict policy while it is checked.
 */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  // The console navigates without reloading, so the script (500 KB) is usually there already
  // from the page's previous check: evaluating it again cost Chromium about 0.1 s a check.
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: any[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n: { target: string[] }) => n.target.join(" ")) }));
  });
  return violations.filter((v: Violation) => v.impact === "serious" || v.impact === "critical");
}
