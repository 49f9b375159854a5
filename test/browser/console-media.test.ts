import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { testEnv } from "../support/env.ts";
import { eventually } from "../support/eventually.ts";
import { pdf, png } from "../support/media-files.ts";
import { insertObject, newBucket, softDeleteObject } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { haveChromium, launch, newPage, screenshot, screenshotAccessible, signIn } from "./browser.ts";
import { containsText, hasCount, until } from "./expect.ts";

/**
 * The media page as a person uses it with many objects: folders and breadcrumbs, picking
 * many tiles (Shift, Ctrl, all of the filter) for a bulk tag or delete (with Undo), the trash,
 * the question an upload onto a taken name asks, and thumbnails that never meet the rate
 * limit. At a desktop's 1440x900 and a phone's 390x844.
 */
// One pass: the console is the same on every backend; the PostgreSQL pass need not even load this file.
const run = haveChromium && testEnv.mode === "embedded";
const SIZES = [
  { name: "desktop", viewport: { width: 1440, height: 900 } },
  { name: "phone", viewport: { width: 390, height: 844 } },
];

let server: TestServer;
let org: TestOrg;
let browser: Browser;

const keysIn = async (bucketId: string) =>
  ((await org.admin.get(`/api/media?bucketId=${bucketId}&sort=key&order=asc&limit=200`)).body.data as { id: string; key: string; size: number; tags: { slug: string }[] }[]);

describe.skipIf(!run)("the console's media page", () => {
  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server, "Media org");
    browser = await launch();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, 60_000);

  for (const size of SIZES) {
    describe(size.name, () => {
      let page: Page;
      let problems: string[];
      let bucket: { id: string; name: string };

      beforeAll(async () => {
        ({ page, problems } = await newPage(browser, { viewport: size.viewport }));
        bucket = await newBucket(org, `media-${size.name}`);
        const keys = ["readme.txt", "photos/b.txt", "photos/a.txt", "photos/c.txt", "photos/2024/old.txt", "variants/set-1/wide.txt"];
        for (let i = 0; i < 8; i++) keys.push(`many/file-${i}.txt`);
        for (const key of keys) await insertObject(server, org, bucket.id, { key, contentType: "text/plain", bytes: new TextEncoder().encode(key) });
        await signIn(page, server.url, org.adminKey.secret);
      }, 120_000);

      test("folders come first, files sort by their name in the folder, the folder is in the URL, breadcrumbs lead back", async () => {
        await page.goto(`${server.url}/console/buckets/${bucket.id}?sort=key&order=asc`);
        const folders = page.getByRole("list", { name: "Folders" }).getByRole("button");
        await hasCount(folders, 3);
        expect(await folders.allTextContents()).toEqual(["many", "photos", "variants"]);
        await hasCount(page.locator(".grid-sizer .tile[data-id]"), 1);
        await page.getByRole("button", { name: "photos", exact: true }).click();
        await until(() => expect(new URL(page.url()).searchParams.get("folder")).toBe("photos/"));
        await hasCount(page.locator(".grid-sizer .tile[data-id]"), 3);
        expect(await page.locator(".grid-sizer .tile-name").allTextContents()).toEqual(["a.txt", "b.txt", "c.txt"]);
        expect(await page.getByRole("list", { name: "Folders" }).getByRole("button").allTextContents()).toEqual(["2024"]);
        await page.getByRole("button", { name: "2024", exact: true }).click();
        await containsText(page.getByRole("navigation", { name: "Folder" }), "2024");
        await hasCount(page.locator(".grid-sizer .tile[data-id]"), 1);
        await screenshotAccessible(page, `media-folder-${size.name}`);
        // A reload keeps the folder; the crumbs lead up.
        await page.reload();
        await hasCount(page.locator(".grid-sizer .tile[data-id]"), 1);
        await page.getByRole("navigation", { name: "Folder" }).getByRole("button", { name: "photos" }).click();
        await hasCount(page.locator(".grid-sizer .tile[data-id]"), 3);
        await page.getByRole("navigation", { name: "Folder" }).getByRole("button", { name: bucket.name }).click();
        await until(() => expect(new URL(page.url()).searchParams.get("folder")).toBeNull());
        // Set renditions under variants/<setId>/ sit in their folder, not at the top.
        // The URL changes before the bucket's page is drawn: wait for the tiles, not the address.
        await until(async () => expect(await page.locator(".grid-sizer .tile-name").allTextContents()).toEqual(["readme.txt"]));
      }, 120_000);

      test("Shift and Ctrl pick tiles, select-all takes the whole filter; bulk tag, bulk delete and Undo", async () => {
        await page.goto(`${server.url}/console/buckets/${bucket.id}?sort=key&order=asc&folder=many%2F`);
        const tiles = page.locator(".grid-sizer .tile[data-id]");
        await hasCount(tiles, 8);
        await tiles.nth(0).click({ modifiers: ["Control"] });
        await tiles.nth(3).click({ modifiers: ["Shift"] });
        await tiles.nth(5).click({ modifiers: ["Control"] });
        await hasCount(page.locator(".grid-sizer .tile.checked"), 5);
        await containsText(page.getByRole("region", { name: "Selected objects" }), "5 objects selected");
        await page.getByLabel("Tags to add (comma-separated)").fill("picked");
        await page.getByRole("button", { name: "Tag", exact: true }).click();
        await until(async () => {
          const tagged = (await keysIn(bucket.id)).filter((o) => o.tags.some((t) => t.slug === "picked")).map((o) => o.key);
          expect(tagged.sort()).toEqual(["many/file-0.txt", "many/file-1.txt", "many/file-2.txt", "many/file-3.txt", "many/file-5.txt"]);
        });
        await screenshotAccessible(page, `media-selection-${size.name}`);

        // All of the filter: 8, though a bulk call names them without their being on screen.
        await page.getByRole("button", { name: "Select all 8 objects" }).click();
        await containsText(page.getByRole("region", { name: "Selected objects" }), "8 objects selected");
        await page.getByRole("region", { name: "Selected objects" }).getByRole("button", { name: "Delete" }).click();
        await page.getByRole("dialog").getByRole("button", { name: "Move to trash" }).click();
        await until(async () => expect((await keysIn(bucket.id)).filter((o) => o.key.startsWith("many/"))).toEqual([]));
        const toast = page.locator(".undo-toast");
        await containsText(toast, "8 objects moved to the trash");
        await toast.getByRole("button", { name: "Undo" }).click();
        await until(async () => expect((await keysIn(bucket.id)).filter((o) => o.key.startsWith("many/")).length).toBe(8));
        await hasCount(tiles, 8);

        // "Select" makes a tap pick (a phone has no Ctrl); then Move into another folder.
        await page.getByRole("button", { name: "Select", exact: true }).click();
        await tiles.nth(6).click();
        await tiles.nth(7).click();
        await containsText(page.getByRole("region", { name: "Selected objects" }), "2 objects selected");
        await page.getByLabel("Move to folder (empty: the top of the bucket)").fill("moved");
        await page.getByRole("button", { name: "Move", exact: true }).click();
        await until(async () => expect((await keysIn(bucket.id)).filter((o) => o.key.startsWith("moved/")).map((o) => o.key)).toEqual(["moved/file-6.txt", "moved/file-7.txt"]));
        await hasCount(tiles, 6);
        await page.getByRole("button", { name: "Done selecting" }).click();
      }, 120_000);

      test("Escape closes the detail panel and focus returns to the tile; after a delete focus is on the next tile", async () => {
        await page.goto(`${server.url}/console/buckets/${bucket.id}?sort=key&order=asc&folder=photos%2F`);
        const tiles = page.locator(".grid-sizer .tile[data-id]");
        await hasCount(tiles, 3);
        const second = await tiles.nth(1).getAttribute("data-id");
        await tiles.nth(1).click();
        await page.locator(".detail h2", { hasText: "b.txt" }).waitFor();
        await page.keyboard.press("Escape");
        await hasCount(page.locator(".detail"), 0);
        await until(async () => expect(await page.evaluate(() => document.activeElement?.getAttribute("data-id"))).toBe(second));
        await tiles.nth(1).click();
        await page.getByRole("button", { name: "Delete b.txt" }).click();
        await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
        await hasCount(tiles, 2);
        await until(async () => expect(await page.evaluate(() => document.activeElement?.closest(".grid-sizer") !== null)).toBe(true));
        expect(await page.evaluate(() => document.activeElement?.textContent)).toContain("c.txt");
        await page.locator(".undo-toast").getByRole("button", { name: "Undo" }).click();
        await hasCount(tiles, 3);
      }, 120_000);

      test("the viewer: full size, zoom, next and previous with the arrow keys, a PDF page drawn, a render preview, a link to copy; Escape back to the tile", async () => {
        await insertObject(server, org, bucket.id, { key: "view/1-wide.png", contentType: "image/png", bytes: await png(300, 100) });
        await insertObject(server, org, bucket.id, { key: "view/2-doc.pdf", contentType: "application/pdf", bytes: pdf(2) });
        // A render is made from the picture the worker extracts; wait for it as a person would.
        const wide = (await keysIn(bucket.id)).find((o) => o.key === "view/1-wide.png")!;
        await eventually(async () => ((await org.admin.get(`/api/media/${wide.id}`)).body.thumbnail?.state === "ready" ? true : undefined), { timeoutMs: 60_000, what: "the picture's thumbnail" });
        await page.goto(`${server.url}/console/buckets/${bucket.id}?sort=key&order=asc&folder=view%2F`);
        const tiles = page.locator(".grid-sizer .tile[data-id]");
        await hasCount(tiles, 2);
        await tiles.nth(0).click();
        await page.getByRole("button", { name: "View full size" }).click();
        const viewer = page.getByRole("dialog", { name: "Viewer: 1-wide.png" });
        await viewer.waitFor();
        await until(async () => expect(await viewer.locator("img.viewer-img").evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBe(300));
        await page.keyboard.press("+");
        await containsText(viewer.getByLabel("Zoom", { exact: true }), "150%");
        await viewer.getByLabel("Width (px)").fill("120");
        await viewer.getByRole("combobox", { name: /^Format/ }).selectOption("png");
        await viewer.getByRole("button", { name: "Preview" }).click();
        const render = viewer.locator("img.viewer-render");
        await until(async () => expect(await render.evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBe(120));
        expect(await viewer.getByLabel("Signed render URL").inputValue()).toContain("/api/render/");
        await viewer.getByRole("combobox", { name: /^Link valid for/ }).selectOption({ label: "7 days" });
        await viewer.getByRole("button", { name: "Copy link" }).click();
        await until(async () => expect(await viewer.getByLabel("Download link").inputValue()).toContain("604800"));
        await screenshotAccessible(page, `viewer-image-${size.name}`);
        await page.keyboard.press("ArrowRight");
        const pdfViewer = page.getByRole("dialog", { name: "Viewer: 2-doc.pdf" });
        await pdfViewer.waitFor();
        await until(async () => expect(await pdfViewer.locator("canvas.viewer-canvas").getAttribute("data-drawn")).toBe("1"), 30_000);
        // The page is drawn: not a blank canvas.
        expect(await pdfViewer.locator("canvas.viewer-canvas").evaluate((c) => (c as HTMLCanvasElement).width)).toBeGreaterThan(100);
        await pdfViewer.getByRole("button", { name: "Next page" }).click();
        await until(async () => expect(await pdfViewer.locator("canvas.viewer-canvas").getAttribute("data-drawn")).toBe("2"), 30_000);
        // At 100% the page and its page buttons fit the screen, a phone's too.
        for (const part of [pdfViewer.locator("canvas.viewer-canvas"), pdfViewer.getByRole("button", { name: "Previous page" })]) {
          const box = (await part.boundingBox())!;
          expect({ size: size.name, left: box.x >= 0, right: box.x + box.width <= size.viewport.width }).toEqual({ size: size.name, left: true, right: true });
        }
        await screenshotAccessible(page, `viewer-pdf-${size.name}`);
        await page.keyboard.press("ArrowLeft");
        await viewer.waitFor();
        await page.keyboard.press("Escape");
        await hasCount(page.getByRole("dialog"), 0);
        await hasCount(page.locator(".detail"), 0);
        await until(async () => expect(await page.evaluate(() => document.activeElement?.textContent)).toContain("1-wide.png"));
        expect(problems).toEqual([]);
      }, 120_000);

      test("the trash: time left, restore, purge after a confirmation", async () => {
        const objects = await keysIn(bucket.id);
        const gone = objects.find((o) => o.key === "readme.txt")!;
        const purged = objects.find((o) => o.key === "photos/c.txt")!;
        await softDeleteObject(server, gone.id);
        await softDeleteObject(server, purged.id);
        await page.goto(`${server.url}/console/trash`);
        const row = page.locator(`tr[data-id="${gone.id}"]`);
        await containsText(row, "readme.txt");
        await containsText(row, "6 days");
        await screenshotAccessible(page, `trash-${size.name}`);
        await row.getByRole("button", { name: "Restore readme.txt" }).click();
        await hasCount(row, 0);
        expect((await org.admin.get(`/api/media/${gone.id}`)).status).toBe(200);
        await page.locator(`tr[data-id="${purged.id}"]`).getByRole("button", { name: "Purge c.txt" }).click();
        await page.getByRole("dialog").getByRole("button", { name: "Purge for good" }).click();
        await hasCount(page.locator(`tr[data-id="${purged.id}"]`), 0);
        expect((await org.admin.get(`/api/trash?limit=200`)).body.data.map((o: { id: string }) => o.id)).not.toContain(purged.id);
      }, 120_000);

      test("an upload onto a taken name asks: replace, keep both or skip; uploading in a folder puts the file under it", async () => {
        await page.goto(`${server.url}/console/buckets/${bucket.id}?sort=key&order=asc&folder=drop%2F`);
        const input = page.locator('input[type="file"]');
        const file = (text: string) => [{ name: "note.txt", mimeType: "text/plain", buffer: Buffer.from(text) }];
        await input.setInputFiles(file("first"));
        await until(async () => expect((await keysIn(bucket.id)).map((o) => o.key)).toContain("drop/note.txt"));
        const first = (await keysIn(bucket.id)).find((o) => o.key === "drop/note.txt")!;
        const row = page.locator('[data-key="drop/note.txt"]').first();

        // Skip: nothing changes.
        await page.getByRole("button", { name: "Clear finished" }).click();
        await input.setInputFiles(file("second, skipped"));
        const asked = page.getByRole("group", { name: "drop/note.txt already exists" });
        await asked.waitFor();
        await screenshotAccessible(page, `upload-conflict-${size.name}`);
        await asked.getByRole("button", { name: "Skip" }).click();
        await until(async () => expect(await row.getAttribute("class")).toContain("upload-skipped"));
        expect((await keysIn(bucket.id)).find((o) => o.key === "drop/note.txt")!.size).toBe(first.size);

        // Keep both: the file goes to a free numbered name beside it.
        await page.getByRole("button", { name: "Clear finished" }).click();
        await input.setInputFiles(file("third, kept beside"));
        await asked.getByRole("button", { name: "Keep both" }).click();
        await until(async () => expect((await keysIn(bucket.id)).map((o) => o.key)).toContain("drop/note (2).txt"));
        expect((await keysIn(bucket.id)).find((o) => o.key === "drop/note.txt")!.size).toBe(first.size);

        // Replace: same key, the new bytes.
        await page.getByRole("button", { name: "Clear finished" }).click();
        await input.setInputFiles(file("fourth, replacing it"));
        await asked.getByRole("button", { name: "Replace" }).click();
        await until(async () => expect((await keysIn(bucket.id)).find((o) => o.key === "drop/note.txt")!.size).toBe("fourth, replacing it".length));
        expect((await keysIn(bucket.id)).find((o) => o.key === "drop/note.txt")!.id).toBe(first.id);

        // "Apply to all": the first answer settles the other taken names of the same choice.
        await page.getByRole("button", { name: "Clear finished" }).click();
        await input.setInputFiles([
          { name: "note.txt", mimeType: "text/plain", buffer: Buffer.from("fifth") },
          { name: "note (2).txt", mimeType: "text/plain", buffer: Buffer.from("sixth") },
          { name: "fresh.txt", mimeType: "text/plain", buffer: Buffer.from("new") },
        ]);
        const firstAsked = page.getByRole("group", { name: /already exists/ }).first();
        await firstAsked.getByLabel("Apply to all").check();
        await firstAsked.getByRole("button", { name: "Skip" }).click();
        await hasCount(page.locator(".upload-skipped"), 2);
        await until(async () => expect((await keysIn(bucket.id)).map((o) => o.key)).toContain("drop/fresh.txt"));
        const after = await keysIn(bucket.id);
        expect(after.find((o) => o.key === "drop/note.txt")!.size).toBe("fourth, replacing it".length);
        expect(after.find((o) => o.key === "drop/note (2).txt")!.size).toBe("third, kept beside".length);
        expect(problems).toEqual([]);
      }, 120_000);
    });
  }

  test("paging through many thumbnails never meets the rate limit: they come from signed paths", async () => {
    // 30 a minute: far fewer than the tiles the page shows, which all load.
    const limited = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "30" } });
    const own = await launch();
    try {
      const o = await newOrg(limited, "Thumbs org");
      const b = await newBucket(o, "thumbs");
      const ids: string[] = [];
      const picture = await png(24, 24);
      for (let i = 0; i < 60; i++) ids.push((await insertObject(limited, o, b.id, { key: `p/${String(i).padStart(3, "0")}.png`, bytes: picture })).id);
      const { derivatives } = await import("../../db/schema/index.ts");
      const { and, eq, inArray } = await import("drizzle-orm");
      await eventually(
        async () => {
          const ready = await limited.services.deps.db.select({ id: derivatives.objectId }).from(derivatives).where(and(inArray(derivatives.objectId, ids), eq(derivatives.state, "ready")));
          return ready.length === ids.length ? true : undefined;
        },
        { timeoutMs: 120_000, what: "60 thumbnails" },
      );
      const { page: p, problems: theirs } = await newPage(own, { viewport: { width: 1440, height: 900 } });
      const refused: string[] = [];
      const pictures: string[] = [];
      p.on("response", (r) => {
        if (r.status() === 429) refused.push(r.url());
        if (/\/api\/(thumbnails|media\/[^/]+\/thumbnail)/.test(r.url())) pictures.push(r.url());
      });
      await p.goto(`${limited.url}/console`);
      await p.getByLabel("API key secret or JWT").fill(o.adminKey.secret);
      await p.getByRole("button", { name: "Sign in" }).click();
      await p.getByRole("navigation", { name: "Console" }).waitFor();
      await p.goto(`${limited.url}/console/buckets/${b.id}?sort=key&order=asc&folder=p%2F`);
      const loaded = new Set<string>();
      const scroller = p.locator(".grid-scroll");
      await p.locator(".grid-sizer img.thumb-img").first().waitFor();
      for (let step = 0; step < 60 && loaded.size < 60; step++) {
        // Every picture on screen shows before the page moves on, as a person would wait for it.
        await until(async () => {
          const states = await p.locator(".grid-sizer img.thumb-img").evaluateAll((imgs) => imgs.map((i) => ({ src: (i as HTMLImageElement).src, ok: (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0 })));
          expect(states.filter((s) => !s.ok)).toEqual([]);
          for (const s of states) loaded.add(s.src);
        }, 30_000);
        await scroller.evaluate((el) => el.scrollBy(0, el.clientHeight));
        await p.keyboard.press("PageDown");
        await p.waitForTimeout(100);
      }
      expect(loaded.size).toBe(60);
      expect(pictures.every((u) => u.includes("/api/thumbnails/"))).toBe(true);
      expect(refused).toEqual([]);
      console.log(`screenshot: ${await screenshot(p, "media-thumbnails-limited")}`);
      expect(theirs).toEqual([]);
    } finally {
      await own.close();
      await limited.stop();
    }
  }, 240_000);
});
