import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "bun:test";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { seriousViolations } from "./axe.ts";

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

/** A context as newPage makes one, for several pages to share (see newPage's `context`). */
export async function newContext(browser: Browser, opts: { colorScheme?: "light" | "dark"; viewport?: { width: number; height: number } } = {}): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: opts.viewport ?? { width: 1360, height: 880 },
    colorScheme: opts.colorScheme ?? "light",
    acceptDownloads: true,
  });
  // A wait's ceiling that holds on a busy machine (Playwright's own is 30 s): what the page
  // waits for is often the worker's thumbnail or facts, which a loaded CI machine delays.
  context.setDefaultTimeout(90_000);
  return context;
}

/**
 * A page that records CSP violations and page errors, in a fresh context (its own
 * sessionStorage, cookies and cache) or, given `context`, in that one: a page of its own still
 * has its own sessionStorage (a sign-in of its own), while the context's cache saves loading
 * and compiling the console's scripts again.
 */
export async function newPage(browser: Browser, opts: { colorScheme?: "light" | "dark"; viewport?: { width: number; height: number }; context?: BrowserContext } = {}) {
  const context = opts.context ?? (await newContext(browser, opts));
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

/** Signs in to the console at `baseUrl` with a key's secret (or a JWT) and waits for its navigation. */
export async function signIn(page: Page, baseUrl: string, secret: string): Promise<void> {
  await page.goto(`${baseUrl}/console`);
  await page.getByLabel("API key secret or JWT").fill(secret);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Console" }).waitFor();
}

/** Photographs the page as `name` and expects no serious accessibility violation on it. */
export async function screenshotAccessible(page: Page, name: string): Promise<void> {
  console.log(`screenshot: ${await screenshot(page, name)}`);
  expect({ page: name, violations: await seriousViolations(page) }).toEqual({ page: name, violations: [] });
}
