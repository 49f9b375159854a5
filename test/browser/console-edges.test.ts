import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { testEnv } from "../support/env.ts";
import { WAIT_CEILING_MS } from "../support/eventually.ts";
import { insertObject, newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { haveChromium, launch, newPage, screenshot, signIn } from "./browser.ts";
import { containsText, hasCount, until } from "./expect.ts";
import { bigPng } from "./files.ts";

/**
 * The console where things go wrong or are done without a mouse: a storage part that keeps
 * failing, a cancelled upload, a bucket that cannot be deleted, the keyboard in the grid, a
 * JWT instead of a key. Runs where console.test.ts runs.
 */
// One pass: the console is the same on every backend; the PostgreSQL pass need not even load this file.
const run = haveChromium && testEnv.mode === "embedded";

let server: TestServer;
let org: TestOrg;
let browser: Browser;
let page: Page;
let problems: string[];

describe.skipIf(!run)("web console, edges", () => {
  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server, "Edges org");
    browser = await launch();
    ({ page, problems } = await newPage(browser));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, 60_000);

  test("a JWT signs in too, and shows who it is", async () => {
    await signIn(page, server.url, org.jwt);
    await containsText(page.locator(".who"), `${org.userId}@example.test`);
  }, 60_000);

  test("a part that keeps failing fails the file; Retry sends only the missing part and finishes it", async () => {
    const bucket = await newBucket(org, "retry");
    await page.goto(`${server.url}/console/buckets/${bucket.id}`);
    // Storage refuses part 2 until the test lets it through.
    let refuse = true;
    let refused = 0;
    const sent: number[] = [];
    await page.route(/partNumber=\d+/, async (route) => {
      const n = Number(new URL(route.request().url()).searchParams.get("partNumber"));
      if (route.request().method() === "PUT") sent.push(n);
      if (refuse && n === 2 && route.request().method() === "PUT") {
        refused++;
        return route.abort("connectionreset");
      }
      return route.continue();
    });
    const flaky = await bigPng(2000, 1900);
    await page.locator('input[type="file"]').setInputFiles([{ name: "flaky.png", mimeType: "image/png", buffer: flaky }]);
    const row = page.locator('[data-key="flaky.png"]');
    await until(async () => expect(await row.getAttribute("class")).toContain("upload-failed"), WAIT_CEILING_MS);
    await containsText(row, "Part 2 of 3 failed");
    expect(refused).toBe(3);
    await screenshot(page, "20-upload-failed-part");
    refuse = false;
    const before = sent.length;
    await page.getByRole("button", { name: "Retry upload of flaky.png" }).click();
    await until(async () => expect(await row.getAttribute("class")).toContain("upload-done"), WAIT_CEILING_MS);
    // Parts 1 and 3 were stored already: only part 2 went again.
    expect(sent.slice(before)).toEqual([2]);
    await page.unroute(/partNumber=\d+/);
    const listed = (await org.admin.get(`/api/media?bucketId=${bucket.id}`)).body.data;
    expect(listed.map((o: { key: string; size: number }) => [o.key, o.size])).toEqual([["flaky.png", flaky.length]]);
  }, 3 * WAIT_CEILING_MS);

  test("Cancel stops an upload and abandons its multipart upload (the reservation is released)", async () => {
    const bucket = await newBucket(org, "cancel");
    await page.goto(`${server.url}/console/buckets/${bucket.id}`);
    // Hold every part, so the upload is still running when Cancel is pressed.
    await page.route(/partNumber=\d+/, () => {});
    await page.locator('input[type="file"]').setInputFiles([{ name: "slow.png", mimeType: "image/png", buffer: await bigPng(2000, 1900) }]);
    const row = page.locator('[data-key="slow.png"]');
    await containsText(row, "Uploading");
    await until(async () => expect((await org.admin.get("/api/usage")).body.reservedStorage).toBeGreaterThan(10 * 1024 * 1024));
    await page.getByRole("button", { name: "Cancel upload of slow.png" }).click();
    await containsText(row, "Canceled");
    await until(async () => expect((await org.admin.get("/api/usage")).body.reservedStorage).toBe(0));
    await page.unroute(/partNumber=\d+/);
    expect((await org.admin.get(`/api/media?bucketId=${bucket.id}`)).body.total).toBe(0);
  }, 3 * WAIT_CEILING_MS);

  test("deleting a bucket that holds objects explains the 409", async () => {
    const bucket = await newBucket(org, "full");
    await insertObject(server, org, bucket.id, { key: "keep.png" });
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Buckets" }).click();
    await page.getByRole("button", { name: `Delete bucket ${bucket.name}` }).click();
    const dialog = page.getByRole("dialog", { name: `Delete bucket ${bucket.name}?` });
    await dialog.getByRole("button", { name: "Delete" }).click();
    await containsText(dialog.getByRole("alert"), "still holds 1 live object");
    await containsText(dialog.getByRole("alert"), "Delete its objects first");
    await screenshot(page, "21-bucket-409");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect((await org.admin.get(`/api/buckets/${bucket.id}`)).status).toBe(200);
  }, 60_000);

  test("the grid works from the keyboard: arrows, Home and End move, Enter opens", async () => {
    const bucket = await newBucket(org, "keys");
    for (let i = 0; i < 12; i++) await insertObject(server, org, bucket.id, { key: `k/${String(i).padStart(2, "0")}.png` });
    // The keys are under k/: the grid shows that folder.
    await page.goto(`${server.url}/console/buckets/${bucket.id}?sort=key&order=asc&folder=k%2F`);
    const tiles = page.locator(".grid-sizer .tile[data-id]");
    await hasCount(tiles, 12);
    await page.getByRole("button", { name: "00.png, image" }).focus();
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
    await until(async () => expect(await focused()).toBe("02.png, image"));
    await page.keyboard.press("End");
    await until(async () => expect(await focused()).toBe("11.png, image"));
    await page.keyboard.press("Home");
    await until(async () => expect(await focused()).toBe("00.png, image"));
    await page.keyboard.press("ArrowDown");
    // One row down: as many tiles on as the grid has columns.
    const columns = await page.evaluate(() => {
      const tops = [...document.querySelectorAll(".grid-sizer .tile-slot")].map((t) => t.getBoundingClientRect().top);
      return tops.filter((t) => t === tops[0]).length;
    });
    const below = `${String(columns).padStart(2, "0")}.png, image`;
    await until(async () => expect(await focused()).toBe(below));
    await page.keyboard.press("Enter");
    await page.getByRole("complementary", { name: below.replace(", image", "") }).waitFor();
    await page.getByRole("button", { name: "Close details" }).click();
    await hasCount(page.getByRole("complementary"), 0);
  }, 60_000);

  test("no CSP violation or script error", () => {
    expect(problems).toEqual([]);
  });
});

describe.skipIf(!run)("web console under the rate limit (docs/console.md)", () => {
  test("thumbnails and calls that meet a 429 wait out its Retry-After and then show", async () => {
    // 60 a minute: one request's room comes back every second, so the waits stay short.
    const limited = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "60" } });
    const own = await launch();
    try {
      const o = await newOrg(limited, "Limited org");
      const bucket = await newBucket(o, "limited");
      const { png } = await import("../support/media-files.ts");
      const { eventually } = await import("../support/eventually.ts");
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await insertObject(limited, o, bucket.id, { key: `t/${i}.png`, bytes: await png(32, 32) })).id);
      // The owner's JWT has its own budget: the key's stays whole until the page uses it.
      for (const id of ids) await eventually(async () => ((await o.owner.get(`/api/media/${id}`)).body.thumbnail?.state === "ready" ? true : undefined), { timeoutMs: 60_000, what: `the thumbnail of ${id}` });
      const { page: p, problems: theirs } = await newPage(own);
      const refused: string[] = [];
      p.on("response", (r) => void (r.status() === 429 && refused.push(r.url())));
      await p.goto(`${limited.url}/console`);
      await p.getByLabel("API key secret or JWT").fill(o.adminKey.secret);
      await p.getByRole("button", { name: "Sign in" }).click();
      await p.getByRole("navigation", { name: "Console" }).waitFor();
      // Spend the key's burst, then open the bucket: its listing and thumbnails meet 429s.
      while ((await o.admin.get("/api/buckets")).status !== 429);
      await p.goto(`${limited.url}/console/buckets/${bucket.id}?sort=key&order=asc&folder=t%2F`);
      await until(async () => expect(await p.locator(".grid-sizer img.thumb-img").count()).toBe(6), 90_000);
      expect(refused.length).toBeGreaterThan(0);
      expect(await p.getByRole("alert").allTextContents()).toEqual([]);
      expect(theirs).toEqual([]);
    } finally {
      await own.close();
      await limited.stop();
    }
  }, 180_000);
});
