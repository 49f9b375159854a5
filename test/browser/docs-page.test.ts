import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { testEnv } from "../support/env.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { haveChromium, launch, newPage, screenshot } from "./browser.ts";

/**
 * The API docs page (/api/docs, Scalar) in Debian's Chromium under its own CSP: configured for
 * a self-hosted server, so nothing on it needs Scalar's hosted service, the server is this one,
 * and the curl samples it shows run as they are. Embedded pass only, like the console's tests.
 */
// One pass: the console is the same on every backend; the PostgreSQL pass need not even load this file.
const run = haveChromium && testEnv.mode === "embedded";

let server: TestServer;
let org: TestOrg;
let browser: Browser;
let page: Page;
let problems: string[];
const elsewhere: string[] = [];

describe.skipIf(!run)("the API docs page", () => {
  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server, "Docs org");
    browser = await launch();
    ({ page, problems } = await newPage(browser));
    page.on("request", (r) => {
      if (!r.url().startsWith(server.url) && !r.url().startsWith("data:") && !r.url().startsWith("blob:")) elsewhere.push(r.url());
    });
    await page.goto(`${server.url}/api/docs#tag/buckets/GET/api/buckets`);
    await page.getByText("Media Storage API").first().waitFor({ timeout: 30_000 });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, 60_000);

  test("hosted-only features are hidden: Ask AI, Generate MCP, Developer Tools, Configure, Share, Deploy, the hosted client", async () => {
    await screenshot(page, "docs-page");
    const labels = await page.evaluate(() => [...document.querySelectorAll("button, a")].map((e) => (e.textContent ?? "").trim()));
    for (const hosted of ["Ask AI", "Generate MCP", "Developer Tools", "Configure", "Share", "Deploy", "Open API Client"]) {
      expect({ hosted, shown: labels.some((l) => l === hosted || l.startsWith(`${hosted} `)) }).toEqual({ hosted, shown: false });
    }
    // What links leave the page: only Scalar's attribution.
    const away = await page.evaluate((origin) => [...document.querySelectorAll("a[href]")].map((a) => (a as HTMLAnchorElement).href).filter((h) => /^https?:/.test(h) && !h.startsWith(origin)), server.url);
    expect(away.map((h) => new URL(h).hostname)).toEqual(away.length ? ["www.scalar.com"] : []);
  });

  test("the server is this one, and the page links to the console and shows the MCP set-up for it", async () => {
    const servers = await page.evaluate(() => document.body.innerText);
    expect(servers).toContain(server.url);
    expect(await page.getByRole("link", { name: "Web console" }).first().getAttribute("href")).toBe("/console");
    await expect(page.getByRole("heading", { name: "MCP set-up" }).first().isVisible()).resolves.toBe(true);
    expect(servers).toContain(`"url": "${server.url}/mcp"`);
  });

  test("its curl samples, with a key filled in, run as they are", async () => {
    await page.getByPlaceholder("Token").first().fill(org.adminKey.secret);
    const sample = await page.waitForFunction(
      () => [...document.querySelectorAll("pre, code")].map((e) => e.textContent ?? "").find((t) => t.startsWith("curl ") && t.includes("/api/buckets?")),
      undefined,
      { timeout: 10_000 },
    );
    const curl = (await sample.jsonValue()) as string;
    expect(curl).toContain(`${server.url}/api/buckets`);
    expect(curl).toContain(`Authorization: Bearer ${org.adminKey.secret}`);
    const proc = Bun.spawn(["bash", "-c", `${curl.trim()} --fail-with-body --silent --show-error`], { stdout: "pipe", stderr: "pipe" });
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect({ code: await proc.exited, err }).toEqual({ code: 0, err: "" });
    expect(JSON.parse(out)).toMatchObject({ data: [], total: 0, hasMore: false });
  });

  test("a request tried from the page goes to this server; nothing is fetched from elsewhere, nothing breaks the CSP", async () => {
    await page.getByRole("button", { name: /Test Request/ }).first().click();
    const send = page.getByRole("button", { name: /^Send/ }).first();
    await send.waitFor({ timeout: 10_000 });
    await send.click();
    await page.getByText("200", { exact: false }).first().waitFor({ timeout: 10_000 });
    await screenshot(page, "docs-page-client");
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
  });
});
