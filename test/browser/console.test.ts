import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { testEnv } from "../support/env.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { seriousViolations } from "./axe.ts";
import { haveChromium, launch, newPage, screenshot } from "./browser.ts";
import { containsText, hasCount, hasText, until } from "./expect.ts";
import { bigPng, png } from "./files.ts";

/**
 * The web console in a real browser (Debian's Chromium through playwright-core), against a
 * real server: every step is what a person does, by role and label. Each page is checked
 * with axe-core and photographed into test/browser/screenshots/.
 *
 * The console is the same on every backend, so it runs in the embedded pass only (the
 * default `npm start`); CI installs Chromium, elsewhere a missing browser skips it.
 */
// One pass: the console is the same on every backend; the PostgreSQL pass need not even load this file.
const run = haveChromium && testEnv.mode === "embedded";
if (!haveChromium && process.env.REQUIRE_SERVICES === "1") throw new Error("Chromium is missing at /usr/bin/chromium (apt-get install chromium)");

let server: TestServer;
let org: TestOrg;
let browser: Browser;
let page: Page;
let problems: string[];
let bucketId: string;

async function signIn(p: Page, secret: string) {
  await p.goto(`${server.url}/`);
  await p.getByLabel("API key secret or JWT").fill(secret);
  await p.getByRole("button", { name: "Sign in" }).click();
}

async function checkPage(p: Page, name: string) {
  await screenshot(p, name);
  const violations = await seriousViolations(p);
  expect({ page: name, violations }).toEqual({ page: name, violations: [] });
}

describe.skipIf(!run)("web console", () => {
  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server, "Console org");
    browser = await launch();
    ({ page, problems } = await newPage(browser));
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, 240_000);

  test("/ leads to the console, served with a strict CSP from this process", async () => {
    const res = await fetch(`${server.url}/`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/console");
    const html = await fetch(`${server.url}/console/buckets`);
    const csp = html.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    const body = await html.text();
    // No third-party origin anywhere in the page: it works offline.
    expect(body).not.toMatch(/https?:\/\//);
  });

  test("a wrong key gets a clear message", async () => {
    await signIn(page, "0".repeat(64));
    await containsText(page.getByRole("alert"), "This key was not accepted");
    await checkPage(page, "01-sign-in-refused");
  }, 240_000);

  test("sign in: who, which organization, scopes and reach", async () => {
    await signIn(page, org.adminKey.secret);
    await page.getByRole("heading", { name: "Buckets" }).waitFor();
    await containsText(page.locator(".who"), "Console org");
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByText("every bucket of the organization").waitFor();
    for (const s of ["read", "write", "delete", "admin"]) await containsText(page.locator(".facts"), s);
    await checkPage(page, "02-account");
    // Only this tab holds the credential: no cookie.
    expect(await page.context().cookies()).toEqual([]);
    expect(await page.evaluate(() => Object.values(sessionStorage))).toContain(org.adminKey.secret);
  }, 240_000);

  test("create a bucket", async () => {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Buckets" }).click();
    await page.getByLabel("New bucket name").fill("holiday-photos");
    await page.getByRole("button", { name: "Create bucket" }).click();
    await page.getByRole("link", { name: "holiday-photos" }).waitFor();
    await checkPage(page, "03-buckets");
    bucketId = (await org.admin.get("/api/buckets")).body.data.find((b: { name: string }) => b.name === "holiday-photos").id;
  }, 240_000);

  test("upload three files (one in parts) with a tag, and see their thumbnails", async () => {
    await page.getByRole("link", { name: "holiday-photos" }).click();
    await page.getByText("This bucket is empty").waitFor();
    await page.getByLabel("Tags for these uploads (comma-separated, at most 10)").fill("summer");
    const big = await bigPng(2000, 1900);
    expect(big.length).toBeGreaterThan(10 * 1024 * 1024);
    await page.locator('input[type="file"]').setInputFiles([
      { name: "beach-blue.png", mimeType: "image/png", buffer: await png(640, 480, { r: 30, g: 120, b: 200 }) },
      { name: "beach-orange.png", mimeType: "image/png", buffer: await png(480, 640, { r: 230, g: 160, b: 40 }) },
      { name: "mountain-big.png", mimeType: "image/png", buffer: big },
    ]);
    const uploads = page.getByRole("list", { name: "Uploads" });
    await containsText(uploads.locator('[data-key="mountain-big.png"]'), "multipart");
    await until(async () => expect(await uploads.locator('[data-state="done"]').count()).toBe(3), 150_000);
    await containsText(uploads.locator('[data-key="mountain-big.png"]'), "3/3 parts");
    // The grid shows the new objects, and their thumbnails once the worker has made them.
    await until(async () => expect(await page.locator(".grid-sizer img.thumb-img").count()).toBe(3), 150_000);
    await checkPage(page, "04-media-grid");
    const listed = (await org.admin.get(`/api/media?bucketId=${bucketId}`)).body.data;
    expect(listed.map((o: { key: string }) => o.key).sort()).toEqual(["beach-blue.png", "beach-orange.png", "mountain-big.png"]);
    for (const o of listed) expect(o.tags.map((t: { slug: string }) => t.slug)).toEqual(["summer"]);
  }, 300_000);

  test("tag an object in its detail panel; edit its metadata", async () => {
    await page.getByRole("button", { name: "beach-orange.png, image" }).click();
    const panel = page.getByRole("complementary", { name: "beach-orange.png" });
    await panel.getByLabel("Add a tag").fill("sunset");
    await panel.getByRole("button", { name: "Add tag" }).click();
    await panel.getByRole("button", { name: "Remove tag sunset" }).waitFor();
    await panel.getByRole("button", { name: "Add entry" }).click();
    await panel.getByLabel("Key").fill("photographer");
    await panel.getByLabel("Value").fill("Ada");
    // A yes/no entry starts unanswered: saving it so is refused, never stored as false.
    await panel.getByRole("button", { name: "Add entry" }).click();
    await panel.getByLabel("Key").nth(1).fill("published");
    await panel.getByLabel("Type").nth(1).selectOption("boolean");
    expect(await panel.getByLabel("Value").nth(1).inputValue()).toBe("");
    await panel.getByRole("button", { name: "Save metadata" }).click();
    await panel.getByText("published: choose yes or no").waitFor();
    await panel.getByLabel("Value").nth(1).selectOption({ label: "yes" });
    await panel.getByRole("button", { name: "Save metadata" }).click();
    await page.getByText("Metadata saved").waitFor();
    await panel.getByText("Dimensions").waitFor();
    await checkPage(page, "05-media-detail");
    const orange = (await org.admin.get(`/api/media?bucketId=${bucketId}&search=orange`)).body.data[0];
    expect(orange.tags.map((t: { slug: string }) => t.slug).sort()).toEqual(["summer", "sunset"]);
    expect(orange.metadata).toEqual({ photographer: "Ada", published: true });
  }, 240_000);

  test("search, then narrow by a facet", async () => {
    await page.getByRole("link", { name: "Search" }).click();
    await page.getByLabel("Search query").fill("beach");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await hasText(page.locator(".result-count"), "2 matches");
    const sunset = page.getByRole("group", { name: "Tags" }).getByRole("checkbox", { name: /sunset/ });
    await containsText(page.getByRole("group", { name: "Tags" }), "sunset1");
    await sunset.check();
    await hasText(page.locator(".result-count"), "1 match");
    await containsText(page.getByRole("region", { name: "Results" }), "beach-orange.png");
    await checkPage(page, "06-search");
  }, 240_000);

  test("reorder a storyboard by drag and drop", async () => {
    const objects = (await org.admin.get(`/api/media?bucketId=${bucketId}&sort=key&order=asc`)).body.data as { id: string; key: string }[];
    await page.getByRole("link", { name: "Storyboards" }).click();
    await page.getByLabel("Name").fill("Trailer");
    await page.getByRole("button", { name: "Create storyboard" }).click();
    await page.getByRole("heading", { name: "Trailer" }).waitFor();
    const boardId = page.url().split("/").pop()!;
    for (const o of objects) await org.admin.post(`/api/storyboards/${boardId}/clips`, { objectId: o.id });
    await page.reload();
    const clips = page.getByRole("list", { name: "Clips in order" }).locator("li");
    await hasCount(clips, 3);
    await containsText(clips.nth(0), "beach-blue.png");
    await clips.nth(2).dragTo(clips.nth(0));
    await until(async () => {
      const board = (await org.admin.get(`/api/storyboards/${boardId}`)).body;
      expect(board.clips.map((c: { objectId: string }) => objects.find((o) => o.id === c.objectId)!.key)).toEqual(["mountain-big.png", "beach-blue.png", "beach-orange.png"]);
    });
    await containsText(clips.nth(0), "mountain-big.png");
    // The keyboard does the same without dragging.
    await page.getByRole("button", { name: "Move clip 1 later" }).click();
    await until(async () => {
      const board = (await org.admin.get(`/api/storyboards/${boardId}`)).body;
      expect(objects.find((o) => o.id === board.clips[0].objectId)!.key).toBe("beach-blue.png");
    });
    await checkPage(page, "07-storyboard");
  }, 240_000);

  test("create a key and see its secret once", async () => {
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByLabel("Name").fill("laptop");
    await page.getByRole("checkbox", { name: "write" }).check();
    // Signed in with an API key that lives 90 days: 365 is accepted, capped, and the dialog says so.
    await page.getByLabel("Expires in (days)").fill("365");
    await page.getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog", { name: "Secret of laptop" });
    await containsText(dialog.getByTestId("secret-note"), "capped at");
    const secret = (await dialog.getByTestId("new-secret").textContent())!.trim();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    await containsText(dialog, "only time the secret is shown");
    await checkPage(page, "08-key-secret");
    await dialog.getByRole("button", { name: "I have stored it" }).click();
    await page.locator('tr[data-key-name="laptop"]').waitFor();
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await page.locator('tr[data-key-name="laptop"]').waitFor();
    expect(await page.content()).not.toContain(secret);
    await checkPage(page, "09-keys");
    // The secret works, with the scopes chosen.
    const me = await server.api.withToken(secret).get("/api/me");
    expect(me.body.credential.scopes.sort()).toEqual(["read", "write"]);
  }, 240_000);

  test("the other pages: categories, sets, usage, tool explorer", async () => {
    await page.getByRole("link", { name: "Categories" }).click();
    await page.getByLabel("Name").fill("Travel");
    await page.getByRole("button", { name: "Create category" }).click();
    await page.locator(".tree-name", { hasText: "Travel" }).waitFor();
    await page.getByLabel("Name").fill("Italy");
    await page.getByLabel("Under").selectOption({ label: "Travel" });
    await page.getByRole("button", { name: "Create category" }).click();
    await page.locator(".tree-name", { hasText: "Italy" }).waitFor();
    await page.getByRole("button", { name: "Move Italy" }).click();
    await page.getByLabel("Move Italy under").selectOption("");
    await page.getByRole("button", { name: "Move", exact: true }).click();
    await until(async () => {
      const roots = (await org.admin.get("/api/categories")).body.data.map((c: { name: string }) => c.name).sort();
      expect(roots).toEqual(["Italy", "Travel"]);
    });
    await hasCount(page.locator(".tree > li"), 2);
    await checkPage(page, "10-categories");

    const base = (await org.admin.get(`/api/media?bucketId=${bucketId}&search=blue`)).body.data[0];
    await page.getByRole("link", { name: "Sets" }).click();
    await page.getByLabel("Name").fill("Hero images");
    await page.getByLabel("Base object id").fill(base.id);
    await page.getByRole("button", { name: "Create set" }).click();
    await page.getByRole("heading", { name: "Hero images" }).waitFor();
    await page.getByRole("button", { name: "Add item" }).click();
    await page.getByText("1:1 · 256×256").waitFor();
    await page.getByRole("button", { name: "Generate renditions" }).click();
    // Renditions appear as the worker makes them.
    await until(async () => expect(await page.locator(".rendition img.thumb-img").count()).toBe(1), 150_000);
    await checkPage(page, "11-set");

    await page.getByRole("link", { name: "Usage & billing" }).click();
    await page.getByText("Storage used").waitFor();
    await page.locator(".chart svg").first().waitFor();
    // Three uploads and the set's rendition.
    await containsText(page.getByRole("region", { name: "This month" }), "Objects4");
    await checkPage(page, "12-usage");

    await page.getByRole("link", { name: "Tool explorer" }).click();
    await page.getByRole("link", { name: /media_list/ }).click();
    await page.getByRole("heading", { name: "List media objects" }).waitFor();
    await page.getByLabel(/^bucketId/).fill(bucketId);
    await page.getByRole("button", { name: "Call media_list" }).click();
    await containsText(page.getByLabel("Result"), "mountain-big.png");
    const curl = await page.getByRole("figure").filter({ hasText: "curl" }).locator("pre").textContent();
    expect(curl).toContain(`/api/media?bucketId=${bucketId}`);
    const mcp = JSON.parse((await page.getByRole("figure").filter({ hasText: "MCP tools/call" }).locator("pre").textContent())!);
    expect(mcp).toEqual({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "media_list", arguments: { bucketId } } });
    await containsText(page.getByRole("figure").filter({ hasText: "CLI" }), `npx media media list --bucket-id ${bucketId}`);
    await checkPage(page, "13-tool-explorer");
  }, 300_000);

  test("dark theme", async () => {
    await page.getByLabel("Theme").selectOption("dark");
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Buckets" }).click();
    await page.getByRole("link", { name: "holiday-photos" }).click();
    // The three uploads; the set's rendition sits in its folder (variants/<setId>/).
    await until(async () => expect(await page.locator(".grid-sizer img.thumb-img").count()).toBe(3));
    await checkPage(page, "14-media-dark");
    await page.getByLabel("Theme").selectOption("system");
  }, 240_000);

  test("a read-only key sees no upload or delete controls", async () => {
    const reader = await org.keyClient(["read"]);
    const { page: p, problems: readerProblems } = await newPage(browser);
    await signIn(p, reader.secret);
    await p.getByRole("heading", { name: "Buckets" }).waitFor();
    await hasCount(p.getByLabel("New bucket name"), 0);
    await hasCount(p.getByRole("button", { name: /Delete/ }), 0);
    await hasCount(p.getByRole("link", { name: "API keys" }), 0);
    await p.getByRole("link", { name: "holiday-photos" }).click();
    await p.getByRole("button", { name: "beach-blue.png, image" }).click();
    const panel = p.getByRole("complementary", { name: "beach-blue.png" });
    await panel.getByRole("button", { name: "Download" }).waitFor();
    await hasCount(p.getByText("Upload files…"), 0);
    await hasCount(p.locator('input[type="file"]'), 0);
    await hasCount(panel.getByRole("button", { name: /Delete/ }), 0);
    await hasCount(panel.getByLabel("Add a tag"), 0);
    await hasCount(panel.getByRole("button", { name: "Save metadata" }), 0);
    // Reading is allowed: a stream URL (asked over MCP, since REST answers a redirect) and a download.
    await panel.getByRole("button", { name: "Stream link" }).click();
    const href = await panel.getByRole("link", { name: "Open the stream URL" }).getAttribute("href");
    const streamed = await fetch(href!);
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("content-type")).toBe("image/png");
    const [download] = await Promise.all([p.waitForEvent("download"), panel.getByRole("button", { name: "Download" }).click()]);
    expect(download.suggestedFilename()).toBe("beach-blue.png");
    await checkPage(p, "15-read-only");
    expect(readerProblems).toEqual([]);
    await p.context().close();
  }, 240_000);

  test("no CSP violation or script error on any page", () => {
    expect(problems).toEqual([]);
  });
});
