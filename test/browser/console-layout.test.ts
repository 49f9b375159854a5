import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { testEnv } from "../support/env.ts";
import { insertObject, newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";
import { seriousViolations } from "./axe.ts";
import { haveChromium, launch, newContext, newPage } from "./browser.ts";
import { containsText, until } from "./expect.ts";
import { png } from "./files.ts";

/**
 * The console's layout on a desktop (1440×900) and a phone (390×844): nothing wider than the
 * screen on any page, the detail panel never over the grid (a sheet of its own on a phone),
 * enough of the grid on a phone, focus on the page's heading after each navigation, dialogs
 * that wrap their text, axe-core clean in light, dark and phone. Every page is photographed at
 * both sizes into a directory printed at the start.
 */
// One pass: the console is the same on every backend; the PostgreSQL pass need not even load this file.
const run = haveChromium && testEnv.mode === "embedded";

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
type Mode = { name: string; viewport: { width: number; height: number }; colorScheme: "light" | "dark" };
const MODES: Mode[] = [
  { name: "desktop", viewport: DESKTOP, colorScheme: "light" },
  { name: "phone", viewport: PHONE, colorScheme: "light" },
  { name: "dark", viewport: DESKTOP, colorScheme: "dark" },
];

let server: TestServer;
let org: TestOrg;
let browser: Browser;
let shots: string;
let photos: { id: string; name: string };
let full: { id: string; name: string };
let objectIds: string[];
let setId: string;
let boardId: string;

/** Everything a page reports that a person should never cause: CSP violations (zod's eval probe), script errors, 4xx/5xx answers. */
interface Watched {
  page: Page;
  problems: string[];
  failedAnswers: string[];
}

/**
 * A mode's context, shared by the pages of the tests that only look, each page signing in on
 * its own (sessionStorage is a page's): the console's scripts come from the context's cache.
 */
const contexts = new Map<string, Promise<BrowserContext>>();
function contextFor(browser: Browser, mode: Mode): Promise<BrowserContext> {
  let context = contexts.get(mode.name);
  if (!context) contexts.set(mode.name, (context = newContext(browser, { viewport: mode.viewport, colorScheme: mode.colorScheme })));
  return context;
}

/** A page in a context of its own, or (`shared`) in the mode's context, where a test closes only its page. */
async function open(browser: Browser, mode: Mode, shared = false): Promise<Watched> {
  const { page, problems } = await newPage(browser, { viewport: mode.viewport, colorScheme: mode.colorScheme, context: shared ? await contextFor(browser, mode) : undefined });
  const failedAnswers: string[] = [];
  page.on("response", (r) => {
    if (r.status() >= 500) failedAnswers.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  // Recorded in the page: a violation caught by the script that caused it still fires this event.
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));
  });
  return { page, problems, failedAnswers };
}

async function signIn(page: Page, secret: string) {
  await page.goto(`${server.url}/console`);
  await page.getByLabel("API key secret or JWT").fill(secret);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 1, name: "Buckets" }).waitFor();
}

/** The page's heading is what has focus (and it is the page's h1). */
async function focusOnHeading(page: Page, name: string) {
  await until(async () => {
    const focused = await page.evaluate(() => ({ tag: document.activeElement?.tagName, text: document.activeElement?.textContent?.trim() }));
    expect(focused).toEqual({ tag: "H1", text: name });
  });
}

/** How wide the page is against the window, with the outermost elements that reach past its right edge (to say what to fix). */
function overflow(page: Page) {
  return page.evaluate(() => ({
    scroll: document.scrollingElement!.scrollWidth,
    inner: window.innerWidth,
    past: (document.scrollingElement!.scrollWidth <= window.innerWidth ? [] : [...document.querySelectorAll("body *")])
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1 && !(el.parentElement && el.parentElement.getBoundingClientRect().right > window.innerWidth + 1))
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join(".")} ${Math.round(el.getBoundingClientRect().right)}`),
  }));
}

type Box = { x: number; y: number; width: number; height: number };
const overlaps = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

interface Visit {
  name: string;
  path: () => string;
  /** What shows once the page has its data. */
  ready: (page: Page) => Promise<unknown>;
}

const VISITS: Visit[] = [
  { name: "buckets", path: () => "/buckets", ready: (p) => p.getByRole("link", { name: photos.name }).waitFor() },
  { name: "bucket", path: () => `/buckets/${photos.id}?sort=key&order=asc`, ready: (p) => p.locator(".grid-sizer .tile[data-id]").nth(5).waitFor() },
  { name: "bucket-detail", path: () => `/buckets/${photos.id}?sort=key&order=asc&object=${objectIds[0]}`, ready: (p) => p.getByRole("complementary").getByRole("button", { name: "Download" }).waitFor() },
  { name: "duplicates", path: () => `/buckets/${photos.id}/duplicates`, ready: (p) => p.locator("article.duplicate-group, main .empty").first().waitFor() },
  { name: "search", path: () => "/search?q=shot", ready: (p) => p.locator(".result-grid li").first().waitFor() },
  { name: "categories", path: () => "/categories", ready: (p) => p.locator(".tree-name", { hasText: "Landscapes" }).waitFor() },
  { name: "sets", path: () => "/sets", ready: (p) => p.getByRole("link", { name: "Banner set" }).waitFor() },
  { name: "set", path: () => `/sets/${setId}`, ready: (p) => p.locator(".rendition").nth(1).waitFor() },
  { name: "storyboards", path: () => "/storyboards", ready: (p) => p.getByRole("link", { name: "Trailer" }).waitFor() },
  { name: "storyboard", path: () => `/storyboards/${boardId}`, ready: (p) => p.locator(".clip").nth(1).waitFor() },
  { name: "usage", path: () => "/usage", ready: (p) => p.locator(".chart svg").first().waitFor() },
  { name: "keys", path: () => "/keys", ready: (p) => p.locator("tr[data-key-name]").first().waitFor() },
  { name: "grants", path: () => "/grants", ready: (p) => p.getByRole("heading", { level: 1, name: "Connected apps" }).waitFor() },
  { name: "tools", path: () => "/tools/media_list", ready: (p) => p.getByRole("heading", { name: "List media objects" }).waitFor() },
  { name: "account", path: () => "/account", ready: (p) => p.locator(".facts").waitFor() },
  { name: "trash", path: () => "/trash", ready: (p) => p.getByRole("button", { name: /Restore/ }).first().waitFor() },
];

describe.skipIf(!run)("web console layout, keyboard and dialogs", () => {
  beforeAll(async () => {
    server = await startServer();
    org = await newOrg(server, "Layout org with a rather long organization name");
    browser = await launch();
    shots = mkdtempSync(join(tmpdir(), "console-layout-"));
    console.log(`console-layout screenshots: ${shots}`);

    photos = await newBucket(org, "photos");
    full = await newBucket(org, "full-bucket-with-a-long-name");
    await insertObject(server, org, full.id, { key: "keep.png" });
    // The trash holds one object with a long key, for the Trash page.
    const doomed = await insertObject(server, org, full.id, { key: "archive/2026/a-rather-long-folder-name/and-a-long-file-name-too.png" });
    expect((await org.admin.delete(`/api/media/${doomed.id}`)).status).toBe(200);
    objectIds = [];
    for (let i = 0; i < 14; i++) {
      const bytes = await png(320 + i * 8, 240, { r: 20 + i * 15, g: 120, b: 200 - i * 10 });
      const row = await insertObject(server, org, photos.id, { key: `shot-${String(i).padStart(2, "0")}.png`, bytes });
      objectIds.push(row.id);
    }
    expect((await org.admin.post("/api/categories", { name: "Landscapes" })).status).toBe(201);
    const set = await org.admin.post("/api/sets", { name: "Banner set", baseObjectId: objectIds[0] });
    expect(set.status).toBe(201);
    setId = set.body.id;
    for (const item of [
      { role: "hero", aspectRatio: "16:9", width: 640, height: 360 },
      { role: "banner", aspectRatio: "3:1", width: 600, height: 200 },
    ]) expect((await org.admin.post(`/api/sets/${setId}/items`, item)).status).toBe(201);
    expect((await org.admin.post(`/api/sets/${setId}/generate`, {})).status).toBe(202);
    const board = await org.admin.post("/api/storyboards", { name: "Trailer", bucketId: photos.id });
    expect(board.status).toBe(201);
    boardId = board.body.id;
    for (const objectId of objectIds.slice(0, 2)) expect((await org.admin.post(`/api/storyboards/${boardId}/clips`, { objectId })).status).toBe(201);
    // The renditions exist before any page shows them.
    await until(async () => {
      const items = (await org.admin.get(`/api/sets/${setId}`)).body.items as { objectId: string | null }[];
      expect(items.every((i) => i.objectId !== null)).toBe(true);
    }, 60_000);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, 60_000);

  /** What one mode saw on one page. */
  interface Seen {
    page: string;
    widths: Awaited<ReturnType<typeof overflow>>;
    violations: Awaited<ReturnType<typeof seriousViolations>>;
  }
  /**
   * Every page loaded once and looked at in each mode in turn, the page resized or its colour
   * scheme switched in between (the console's layout follows both through CSS and a
   * ResizeObserver): a third of the page loads, sign-ins and browser contexts of one sweep per
   * mode. What a mode saw, and the problems and failed answers while it was shown, are its own;
   * each mode's test asserts on them.
   */
  let sweeping: Promise<Map<string, { seen: Seen[]; problems: string[]; failedAnswers: string[] }>> | undefined;
  const sweep = () =>
    (sweeping ??= (async () => {
      const results = new Map(MODES.map((m) => [m.name, { seen: [] as Seen[], problems: [] as string[], failedAnswers: [] as string[] }]));
      const w = await open(browser, MODES[0]!);
      const { page } = w;
      // Problems so far belong to the mode on screen since the last call.
      const settle = (mode: Mode) => {
        const r = results.get(mode.name)!;
        r.problems.push(...w.problems.splice(0));
        r.failedAnswers.push(...w.failedAnswers.splice(0));
      };
      try {
        await signIn(page, org.adminKey.secret);
        for (const visit of VISITS) {
          for (const [i, mode] of MODES.entries()) {
            await page.setViewportSize(mode.viewport);
            await page.emulateMedia({ colorScheme: mode.colorScheme });
            if (i === 0) await page.goto(`${server.url}/console${visit.path()}`);
            await visit.ready(page);
            await page.locator("main h1").first().waitFor();
            // Two frames: what a resize or a new scheme changes is laid out and painted.
            await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
            await page.screenshot({ path: join(shots, `${mode.name}-${visit.name}.png`), fullPage: mode.name === "phone" && !visit.name.startsWith("bucket") });
            const widths = await overflow(page);
            const violations = await seriousViolations(page);
            results.get(mode.name)!.seen.push({ page: `${mode.name} ${visit.name}`, widths, violations });
            settle(mode);
          }
        }
      } finally {
        await page.context().close();
      }
      return results;
    })());

  // The tests that only look run side by side, each in a browser context of its own (a test's
  // time goes mostly to waiting on the page or the server); the two that change the set and the
  // storyboard the sweep photographs run after them, one at a time.
  for (const mode of MODES) {
    test.concurrent(`${mode.name}: every page fits the screen, is photographed, and axe-core finds nothing`, async () => {
      const mine = (await sweep()).get(mode.name)!;
      expect(mine.seen.map((s) => s.page)).toEqual(VISITS.map((v) => `${mode.name} ${v.name}`));
      for (const { page, widths, violations } of mine.seen) {
        expect({ page, fits: widths.scroll <= widths.inner, ...widths }).toEqual({ page, fits: true, ...widths, past: [] });
        expect({ page, violations }).toEqual({ page, violations: [] });
      }
      // No eval probe, no script error, no 501 from Usage (or anything else) on any page.
      expect(mine.problems).toEqual([]);
      expect(mine.failedAnswers).toEqual([]);
    }, 240_000);
  }

  for (const mode of MODES.slice(0, 2)) {
    test.concurrent(`${mode.name}: focus lands on the page's heading after sign-in and every navigation; a skip link leads to the content`, async () => {
      const { page } = await open(browser, mode, true);
      await signIn(page, org.adminKey.secret);
      await focusOnHeading(page, "Buckets");
      await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "API keys" }).click();
      await focusOnHeading(page, "API keys");
      await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Buckets" }).click();
      await focusOnHeading(page, "Buckets");
      await page.getByRole("link", { name: photos.name }).click();
      await focusOnHeading(page, photos.name);
      await page.goBack();
      await focusOnHeading(page, "Buckets");
      // Before the header's first link comes the skip link, shown when focused, leading past the header and navigation.
      await page.getByRole("link", { name: "Media console" }).focus();
      await page.keyboard.press("Shift+Tab");
      const skip = page.getByRole("link", { name: "Skip to content" });
      await until(async () => expect(await skip.evaluate((el) => el === document.activeElement)).toBe(true));
      const box = (await skip.boundingBox())!;
      expect(box.x >= 0 && box.y >= 0 && box.x + box.width <= mode.viewport.width).toBe(true);
      await page.keyboard.press("Enter");
      await until(async () => expect(await page.evaluate(() => document.activeElement?.id)).toBe("main"));
      await page.close();
    }, 120_000);

    test.concurrent(`${mode.name}: dialogs opened from table rows wrap their text, left-aligned, and Escape closes them`, async () => {
      const { page } = await open(browser, mode, true);
      await signIn(page, org.adminKey.secret);
      await page.getByRole("button", { name: `Delete bucket ${full.name}` }).click();
      const dialog = page.getByRole("dialog", { name: `Delete bucket ${full.name}?` });
      await dialog.getByRole("button", { name: "Delete", exact: true }).click();
      const alert = dialog.getByRole("alert");
      await containsText(alert, "still holds 1 live object");
      await page.screenshot({ path: join(shots, `${mode.name}-dialog-409.png`) });
      const shape = await alert.evaluate((el) => {
        const style = getComputedStyle(el);
        const line = parseFloat(style.lineHeight) || 20;
        return { whiteSpace: style.whiteSpace, textAlign: style.textAlign, lines: Math.round(el.clientHeight / line) >= 2, fits: el.scrollWidth <= el.clientWidth };
      });
      expect(shape).toEqual({ whiteSpace: "normal", textAlign: "left", lines: true, fits: true });
      const box = (await dialog.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(mode.viewport.width);
      await page.keyboard.press("Escape");
      await until(async () => expect(await dialog.count()).toBe(0));

      await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "API keys" }).click();
      const row = page.locator("tr[data-key-name]").first();
      await row.getByRole("button", { name: /^Rotate / }).click();
      const rotate = page.getByRole("dialog", { name: /^Rotate / });
      const text = rotate.getByText("A new secret is issued");
      expect(await text.evaluate((el) => [getComputedStyle(el).whiteSpace, getComputedStyle(el).textAlign])).toEqual(["normal", "left"]);
      await page.screenshot({ path: join(shots, `${mode.name}-dialog-rotate.png`) });
      await page.keyboard.press("Escape");
      await until(async () => expect(await rotate.count()).toBe(0));
      await page.close();
    }, 120_000);

    test.concurrent(`${mode.name}: the detail panel never overlaps the grid, nor the upload button its actions`, async () => {
      const { page } = await open(browser, mode, true);
      await signIn(page, org.adminKey.secret);
      await page.goto(`${server.url}/console/buckets/${photos.id}?sort=key&order=asc`);
      const tiles = page.locator(".grid-sizer .tile[data-id]");
      await tiles.nth(5).waitFor();
      // A person scrolls down to the grid: once there, at least 6 whole tiles are on screen.
      await page.locator(".grid-scroll").evaluate((el) => el.scrollIntoView({ block: "start" }));
      await until(async () => {
        const seen = await tiles.evaluateAll((els) => ({
          whole: els.filter((el) => {
            const r = el.getBoundingClientRect();
                        // A pixel of sub-pixel scrolling either side still counts as whole.
            return r.top >= -1 && r.left >= 0 && r.bottom <= window.innerHeight + 1 && r.right <= window.innerWidth && r.width > 0;
          }).length,
          grid: JSON.stringify(document.querySelector(".grid-scroll")!.getBoundingClientRect()),
        }));
        expect(seen.whole, seen.grid).toBeGreaterThanOrEqual(6);
      });
      await page.screenshot({ path: join(shots, `${mode.name}-grid-scrolled.png`) });
      if (mode.name === "phone") {
        // One scroller: the grid moves with the page, it does not scroll inside it.
        expect(await page.locator(".grid-scroll").evaluate((el) => el.scrollHeight <= el.clientHeight + 1)).toBe(true);
        // The keyboard still reaches the last tile, the page scrolling to it.
        await tiles.first().focus();
        await page.keyboard.press("End");
        await until(async () => expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("shot-13.png, image"));
        const last = (await page.getByRole("button", { name: "shot-13.png, image" }).boundingBox())!;
        expect(last.y >= 0 && last.y + last.height <= PHONE.height + 1).toBe(true);
        await page.locator(".grid-scroll").evaluate((el) => el.scrollIntoView({ block: "start" }));
      }

      await page.getByRole("button", { name: "shot-01.png, image" }).click();
      const panel = page.getByRole("complementary", { name: "shot-01.png" });
      await panel.getByRole("button", { name: "Download" }).waitFor();
      await page.screenshot({ path: join(shots, `${mode.name}-panel-open.png`) });
      const grid = (await page.locator(".grid-scroll").boundingBox())!;
      const sheet = (await panel.boundingBox())!;
      expect(grid.width).toBeGreaterThan(150);
      if (mode.name === "phone") {
        // A full-screen sheet over the grid, with its own close button on screen.
        expect(sheet).toEqual({ x: 0, y: 0, width: PHONE.width, height: PHONE.height });
        const close = (await panel.getByRole("button", { name: "Close details" }).boundingBox())!;
        expect(close.y).toBeGreaterThanOrEqual(0);
        expect(close.x + close.width).toBeLessThanOrEqual(PHONE.width);
      } else {
        expect(overlaps(grid, sheet)).toBe(false);
        const upload = await page.getByText("Upload files…").boundingBox();
        if (upload) expect(overlaps(upload, sheet)).toBe(false);
      }
      // What is on top at the centre of the panel's Delete is the Delete button itself.
      const del = panel.getByRole("button", { name: /^Delete/ }).first();
      await del.scrollIntoViewIfNeeded();
      expect(await del.evaluate((el) => {
        const r = el.getBoundingClientRect();
        return el.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
      })).toBe(true);
      await panel.getByRole("button", { name: "Close details" }).click();
      await until(async () => expect(await page.getByRole("complementary").count()).toBe(0));
      await page.close();
    }, 120_000);
  }

  test.concurrent("the tool explorer asks before a destructive call; Cancel sends nothing", async () => {
    const { page } = await open(browser, MODES[0]!, true);
    await signIn(page, org.adminKey.secret);
    await page.goto(`${server.url}/console/tools/buckets_delete`);
    await page.getByLabel(/^id/).fill(full.id);
    await page.getByRole("button", { name: "Call buckets_delete" }).click();
    const ask = page.getByRole("dialog", { name: "Call buckets_delete?" });
    await containsText(ask, full.id);
    await ask.getByRole("button", { name: "Cancel" }).click();
    await until(async () => expect(await ask.count()).toBe(0));
    expect((await org.admin.get(`/api/buckets/${full.id}`)).status).toBe(200);
    expect(await page.getByLabel("Result").count()).toBe(0);
    // A read-only tool runs at once.
    await page.goto(`${server.url}/console/tools/buckets_list`);
    await page.getByRole("button", { name: "Call buckets_list" }).click();
    await containsText(page.getByLabel("Result"), photos.name);
    await page.close();
  }, 60_000);

  test("a storyboard clip is picked by searching, not by typing an id", async () => {
    const { page, problems } = await open(browser, MODES[1]!, true);
    await signIn(page, org.adminKey.secret);
    await page.goto(`${server.url}/console/storyboards/${boardId}`);
    await page.locator(".clip").nth(1).waitFor();
    await page.getByLabel("Find an object to add").fill("shot-07");
    await page.getByRole("button", { name: /shot-07\.png/ }).click();
    await page.getByRole("button", { name: "Add clip" }).click();
    await until(async () => expect(await page.locator(".clip").count()).toBe(3));
    const clips = (await org.admin.get(`/api/storyboards/${boardId}`)).body.clips as { objectId: string }[];
    expect(clips.map((c) => c.objectId)).toContain(objectIds[7]!);
    await page.screenshot({ path: join(shots, "phone-storyboard-picked.png"), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  test("a set's renditions keep their shape and open or download; a stale error note goes once an action succeeds", async () => {
    const { page } = await open(browser, MODES[0]!, true);
    await signIn(page, org.adminKey.secret);
    await page.goto(`${server.url}/console/sets/${setId}`);
    const banner = page.locator(".rendition").filter({ hasText: "banner" });
    await banner.locator("img.thumb-img").waitFor({ timeout: 60_000 });
    const ratio = await banner.locator(".rendition-pic").evaluate((el) => el.getBoundingClientRect().width / el.getBoundingClientRect().height);
    expect(Math.abs(ratio - 3)).toBeLessThan(0.1);
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download banner 600×200" }).click()]);
    expect(download.url()).toContain("variants");

    // A refused item leaves its note; a successful Generate then clears it.
    // 100×300 is not the preset's 1:1: the service refuses it.
    await page.getByLabel("Width").fill("100");
    await page.getByLabel("Height").fill("300");
    await page.getByRole("button", { name: "Add item" }).click();
    const note = page.getByRole("form", { name: "Add a rendition" }).getByRole("alert");
    await note.waitFor();
    await page.getByRole("button", { name: "Generate renditions" }).click();
    await until(async () => expect(await note.count()).toBe(0));

    await page.getByRole("link", { name: "Open banner 600×200" }).click();
    await page.getByRole("complementary").getByRole("button", { name: "Download" }).waitFor();
    await page.close();
  }, 120_000);
});
