import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { newBucket } from "../support/objects.ts";
import { copiesOf, otherScene, scene } from "../support/pictures.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { upload } from "../support/upload.ts";
import { seriousViolations } from "./axe.ts";
import { haveChromium, launch, newPage, screenshot, screenshotAccessible, signIn } from "./browser.ts";
import { containsText, hasCount, until } from "./expect.ts";

/**
 * A bucket's Duplicates page: three resized copies of one picture and a different picture
 * make one group of three, shown with their thumbnails; "keep the largest" moves the two
 * smaller copies to the trash after a confirmation that says how many and how much, and Undo
 * brings them back; a copy picked on its own goes the same way, and so do the smaller copies of
 * every group shown at once. At a desktop's 1440x900 and a phone's 390x844 (dark), axe-core
 * clean, photographed.
 */
// One pass: the console is the same on every backend; the PostgreSQL pass need not even load this file.
const run = haveChromium && testEnv.mode === "embedded";

let server: TestServer;
let org: TestOrg;
let browser: Browser;
let bucket: { id: string; name: string };
let copies: { id: string; key: string; size: number }[];
let different: { id: string };

const trashed = async () => ((await org.admin.get("/api/trash?limit=200")).body.data as { id: string }[]).map((o) => o.id).sort();
const live = async (id: string) => (await org.admin.get(`/api/media/${id}`)).status === 200;
/** Every picture shown in the groups has its thumbnail drawn. */
const thumbnailsDrawn = (p: Page, n: number) =>
  until(async () => {
    const widths = await p.locator(".duplicate-group img.thumb-img").evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).naturalWidth));
    expect(widths.length).toBe(n);
    expect(widths.every((w) => w > 0)).toBe(true);
  }, 30_000);

describe.skipIf(!run)("the console's duplicates page", () => {
  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server, "Duplicates org");
    browser = await launch();
    bucket = await newBucket(org, "dupes");
    copies = [];
    for (const c of await copiesOf(await scene())) copies.push(await upload(org.admin, bucket.id, `copies/${c.name}`, c.bytes, { contentType: c.contentType }));
    different = await upload(org.admin, bucket.id, "different.png", await otherScene(), { contentType: "image/png" });
    copies.sort((a, b) => b.size - a.size);
    // The pictures are compared once the worker made their thumbnails (and hashes).
    for (const o of [...copies, different]) {
      await eventually(async () => ((await org.admin.get(`/api/media/${o.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { timeoutMs: 120_000, what: "a thumbnail" });
    }
    await eventually(async () => ((await org.admin.get(`/api/buckets/${bucket.id}/duplicates`)).body.data?.[0]?.objects.length === 3 ? true : undefined), {
      timeoutMs: 60_000,
      what: "the group of three",
    });
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, 60_000);

  test("desktop: from the bucket to its one group of three; keep the largest moves the other two to the trash; Undo restores them", async () => {
    const { page, problems } = await newPage(browser, { viewport: { width: 1440, height: 900 } });
    await signIn(page, server.url, org.adminKey.secret);
    await page.goto(`${server.url}/console/buckets/${bucket.id}`);
    await page.getByRole("link", { name: "Duplicates" }).click();
    await page.getByRole("heading", { level: 1, name: "Duplicates" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/console/buckets/${bucket.id}/duplicates`);
    const groups = page.locator("article.duplicate-group");
    await hasCount(groups, 1);
    const group = page.getByRole("article", { name: "Group 1: 3 pictures" });
    await hasCount(group.locator("li.duplicate"), 3);
    // Largest first, each with its key and size; the different picture is in no group.
    expect(await group.locator("li.duplicate").evaluateAll((els) => els.map((el) => el.getAttribute("data-id")))).toEqual(copies.map((c) => c.id));
    await containsText(group, "copies/large.jpg");
    await containsText(group.locator("li.duplicate").first(), "largest, kept");
    expect(await page.locator(`li.duplicate[data-id="${different.id}"]`).count()).toBe(0);
    await thumbnailsDrawn(page, 3);
    await screenshotAccessible(page, "duplicates-desktop");

    const freed = copies[1]!.size + copies[2]!.size;
    await group.getByRole("button", { name: "Group 1: keep the largest, move the rest to Trash" }).click();
    const dialog = page.getByRole("dialog", { name: "Move 2 objects to the trash?" });
    await dialog.waitFor();
    const said = (await dialog.textContent()) ?? "";
    // The freed bytes as the page writes them (KiB with one decimal under 10).
    const kib = freed / 1024;
    expect(said).toContain(`freeing ${kib < 10 ? kib.toFixed(1) : kib.toFixed(0)} KiB`);
    expect(said).toContain("copies/large.jpg");
    await screenshotAccessible(page, "duplicates-confirm-desktop");
    await dialog.getByRole("button", { name: "Move 2 objects to trash" }).click();

    await until(async () => expect(await trashed()).toEqual([copies[1]!.id, copies[2]!.id].sort()), 30_000);
    expect(await live(copies[0]!.id)).toBe(true);
    expect(await live(different.id)).toBe(true);
    await containsText(page.locator("main"), "No duplicates");
    // Focus is back on the page (not lost to <body> with the group's buttons).
    await until(async () => expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("H1"));
    const toast = page.locator(".undo-toast");
    await containsText(toast, "2 objects moved to the trash");
    await toast.getByRole("button", { name: "Undo" }).click();
    await until(async () => expect(await trashed()).toEqual([]), 30_000);
    for (const c of copies) expect(await live(c.id)).toBe(true);
    await hasCount(page.getByRole("article", { name: "Group 1: 3 pictures" }), 1);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 180_000);

  test("phone, dark: the group fits the screen; a copy picked on its own goes to the trash after a confirmation, and Undo brings it back", async () => {
    const { page, problems } = await newPage(browser, { viewport: { width: 390, height: 844 }, colorScheme: "dark" });
    await signIn(page, server.url, org.adminKey.secret);
    await page.goto(`${server.url}/console/buckets/${bucket.id}/duplicates`);
    const group = page.getByRole("article", { name: "Group 1: 3 pictures" });
    await hasCount(group.locator("li.duplicate"), 3);
    await thumbnailsDrawn(page, 3);
    const widths = await page.evaluate(() => ({ scroll: document.scrollingElement!.scrollWidth, inner: window.innerWidth }));
    expect(widths.scroll).toBeLessThanOrEqual(widths.inner);
    const file = await screenshot(page, "duplicates-phone-dark");
    await page.screenshot({ path: file, fullPage: true });
    console.log(`screenshot: ${file}`);
    expect({ violations: await seriousViolations(page) }).toEqual({ violations: [] });

    // The smallest copy, picked with the keyboard.
    const smallest = copies[2]!;
    const box = group.getByRole("checkbox", { name: `Select ${smallest.key}` });
    await box.focus();
    await page.keyboard.press("Space");
    await until(async () => expect(await box.isChecked()).toBe(true));
    await page.getByRole("button", { name: "Move 1 selected picture to Trash" }).click();
    const dialog = page.getByRole("dialog", { name: "Move 1 object to the trash?" });
    await dialog.waitFor();
    const d = (await dialog.boundingBox())!;
    expect(d.x >= 0 && d.x + d.width <= 390).toBe(true);
    await screenshot(page, "duplicates-confirm-phone-dark");
    await dialog.getByRole("button", { name: "Move 1 object to trash" }).click();
    await until(async () => expect(await trashed()).toEqual([smallest.id]), 30_000);
    // Two copies are still alike: the group stays, of two.
    await hasCount(page.getByRole("article", { name: "Group 1: 2 pictures" }), 1);
    await page.locator(".undo-toast").getByRole("button", { name: "Undo" }).click();
    await until(async () => expect(await trashed()).toEqual([]), 30_000);
    await hasCount(page.getByRole("article", { name: "Group 1: 3 pictures" }), 1);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 180_000);

  test("every group shown at once: one confirmation with the count and the bytes, the largest of each stays; Undo restores", async () => {
    const two = await newBucket(org, "two-groups");
    const made: { id: string; key: string; size: number }[][] = [];
    for (const [prefix, picture] of [["a", await scene()], ["b", await otherScene()]] as const) {
      const group = [];
      for (const c of (await copiesOf(picture)).slice(0, prefix === "a" ? 3 : 2)) group.push(await upload(org.admin, two.id, `${prefix}/${c.name}`, c.bytes, { contentType: c.contentType }));
      made.push(group.sort((x, y) => y.size - x.size));
    }
    await eventually(async () => ((await org.admin.get(`/api/buckets/${two.id}/duplicates`)).body.total === 2 ? true : undefined), { timeoutMs: 120_000, what: "two groups" });
    const extras = made.flatMap((g) => g.slice(1));
    const { page, problems } = await newPage(browser, { viewport: { width: 1440, height: 900 } });
    await signIn(page, server.url, org.adminKey.secret);
    await page.goto(`${server.url}/console/buckets/${two.id}/duplicates`);
    await hasCount(page.locator("article.duplicate-group"), 2);
    // The group that frees the most comes first.
    await page.getByRole("article", { name: "Group 1: 3 pictures" }).waitFor();
    await page.getByRole("button", { name: "Keep the largest of each, trash the rest (2 groups shown)" }).click();
    const dialog = page.getByRole("dialog", { name: "Move 3 objects to the trash?" });
    await dialog.waitFor();
    await containsText(dialog, "each of the 2 groups shown stays");
    await containsText(dialog, "freeing ");
    await dialog.getByRole("button", { name: "Move 3 objects to trash" }).click();
    await until(async () => expect(await trashed()).toEqual(extras.map((o) => o.id).sort()), 30_000);
    for (const g of made) expect(await live(g[0]!.id)).toBe(true);
    await containsText(page.locator("main"), "No duplicates");
    await page.locator(".undo-toast").getByRole("button", { name: "Undo" }).click();
    await until(async () => expect(await trashed()).toEqual([]), 30_000);
    await hasCount(page.locator("article.duplicate-group"), 2);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 240_000);
});
