import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`); Playwright's own browser download is not reachable here. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const haveChromium = existsSync(CHROMIUM);

export const SCREENSHOTS = join(import.meta.dir, "screenshots");

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/** A fresh context (its own sessionStorage) that records CSP violations and page errors. */
export async function newPage(browser: Browser, opts: { colorScheme?: "light" | "dark"; viewport?: { width: number; height: number } } = {}) {
  const context: BrowserContext = await browser.newContext({
    viewport: opts.viewport ?? { width: 1360, height: 880 },
    colorScheme: opts.colorScheme ?? "light",
    acceptDownloads: true,
  });
  // A wait's ceiling that holds on a busy machine (Playwright's own is 30 s): what the page
  // waits for is often the worker's thumbnail or facts, which a loaded CI machine delays.
  context.setDefaultTimeout(90_000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !/Failed to load resource/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  return { page, context, problems };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}
