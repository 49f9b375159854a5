import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { textPdf } from "../support/text-files.ts";
import { upload } from "../support/upload.ts";
import { haveChromium, launch, newPage } from "./browser.ts";
import { containsText, hasText } from "./expect.ts";

/**
 * The console's search shows where a result matched inside a file: the words around it, the
 * matched one marked, and a PDF's page; a file's own markup never reaches the page as HTML.
 * Runs where console.test.ts runs.
 */
// One pass: the console is the same on every backend; the PostgreSQL pass need not even load this file.
const run = haveChromium && testEnv.mode === "embedded";

let server: TestServer;
let org: TestOrg;
let browser: Browser;
let page: Page;
let problems: string[];

describe.skipIf(!run)("web console, search inside files", () => {
  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server, "Text org");
    browser = await launch();
    ({ page, problems } = await newPage(browser));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, 60_000);

  test("a word inside a PDF and a text file: snippets with the word marked, the page named", async () => {
    const bucket = await newBucket(org, "docs");
    await upload(org.admin, bucket.id, "contract.pdf", textPdf([["Preamble"], ["Nothing here"], ["Signed by the quokka society"]]), { contentType: "application/pdf" });
    await upload(org.admin, bucket.id, "notes.md", "The quokka <b>smiles</b> & waves", { contentType: "text/markdown" });
    await eventually(async () => ((await org.admin.get("/api/search?q=quokka")).body.total === 2 ? true : undefined), { what: "both files' text to be read" });

    await page.goto(`${server.url}/console`);
    await page.getByLabel("API key secret or JWT").fill(org.adminKey.secret);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Search" }).click();
    await page.getByLabel("Search query").fill("quokka");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await hasText(page.locator(".result-count"), "2 matches");
    const results = page.getByRole("region", { name: "Results" });
    await containsText(results, "Signed by the quokka society · page 3");
    expect(await results.locator(".tile-snippet mark").allTextContents()).toEqual(["quokka", "quokka"]);
    // The file's own markup never becomes elements (PostgreSQL's headline leaves tags out), and
    // an escaped character shows as itself, not as its entity.
    await containsText(results, "quokka smiles & waves");
    expect(await results.locator(".tile-snippet b").count()).toBe(0);
    expect(problems).toEqual([]);
  }, 90_000);
});
