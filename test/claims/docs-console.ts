import { expect } from "bun:test";
import type { PageClaims } from "./claim.ts";
import { org } from "../support/claim-checks.ts";
import { newBucket } from "../support/objects.ts";

const EDGES = "test/browser/console-edges.test.ts";
const CONSOLE = "test/browser/console.test.ts";
const MEDIA = "test/browser/console-media.test.ts";
const DUPLICATES = "test/browser/console-duplicates.test.ts";

/** The Duplicates page runs only in a browser: its numbers are read from its source (and the tool's range from the contract). */
async function duplicatesPageNumbers() {
  const source = await Bun.file(new URL("../../console/app/pages/duplicates.tsx", import.meta.url)).text();
  const constant = (name: string) => new RegExp(`const ${name} = ([^;]+);`).exec(source)?.[1];
  expect([constant("PAGE"), constant("DISTANCES"), constant("DEFAULT_DISTANCE")]).toEqual(["20", "[0, 2, 4, 6, 8, 10]", "4"]);
  const { MAX_PICTURE_DISTANCE } = await import("../../contract/similar.ts");
  expect(MAX_PICTURE_DISTANCE).toBe(10);
}

export default {
  page: "docs/console.md",
  claims: [
    {
      says: "on a store reached through S3_ENDPOINT only when the bucket has no CORS rules, so rules of an operator's own are never replaced",
      by: { file: "test/integration/storage-cors-kept.test.ts", test: "a bucket with the operator's CORS rules keeps them across starts" },
    },
    { says: "the groups that free the most first, 20 to a page:", check: duplicatesPageNumbers },
    { says: "\"How alike\" sets how many of the hash's 64 bits may differ (0 to 10, 4 by default).", check: duplicatesPageNumbers },
    {
      says: "\"Keep the largest, move the rest to Trash\" acts on one group or on every group shown, and pictures can be picked one by one; a confirmation says how many objects and how many bytes,",
      by: { file: DUPLICATES, test: "every group shown at once: one confirmation with the count and the bytes" },
    },
    { says: "they go to the trash (objects_bulk_delete), and Undo brings them back.", by: { file: DUPLICATES, test: "keep the largest moves the other two to the trash; Undo restores them" } },
    { says: "A bucket without any shows \"No duplicates\"", by: { file: DUPLICATES, test: "keep the largest moves the other two to the trash" } },
    { says: "| Buckets | list with object counts; create; delete, with the 409 of a non-empty bucket explained |", by: { file: EDGES, test: "deleting a bucket that holds objects explains the 409" } },
    {
      says: "charts of storage, egress and API calls per day (plain SVG, 7 to 365 days);",
      check: async () => {
        const page = await Bun.file(new URL("../../console/app/pages/usage.tsx", import.meta.url)).text();
        const days = [...page.matchAll(/<option value=\{(\d+)\}>/g)].map((m) => Number(m[1]));
        expect([Math.min(...days), Math.max(...days)]).toEqual([7, 365]);
      },
    },
    { says: "| Usage & billing | this month's storage, reservations, objects, egress and API calls;", by: { file: CONSOLE, test: "the other pages: categories, sets, usage, tool explorer" } },
    { says: "media_stream answers a 302; a page cannot read a redirect's target, so the console calls the same tool over MCP", by: { file: "test/integration/usage.test.ts", test: "downloads and streams count egress this month, in the ledger and in today's history point" } },
    { says: "they count against RATE_LIMIT_PER_MINUTE; the console waits out a 429 (Retry-After) instead of failing.", by: { file: EDGES, test: "thumbnails and calls that meet a 429 wait out its Retry-After and then show" } },
    {
      says: "Those requests have an allowance of their own per client address, 20 times RATE_LIMIT_PER_MINUTE, so paging through hundreds of tiles never meets a 429.",
      by: { file: MEDIA, test: "paging through many thumbnails never meets the rate limit: they come from signed paths" },
    },
    {
      says: "Those requests have an allowance of their own per client address, 20 times RATE_LIMIT_PER_MINUTE,",
      check: async () => {
        const { THUMBNAIL_ALLOWANCE_FACTOR } = await import("../../http/guards/index.ts");
        expect(THUMBNAIL_ALLOWANCE_FACTOR).toBe(20);
      },
    },
    {
      says: "Every answer with one live object (media_get, a search's or media_similar's results, and what a confirm, a metadata change, a restore or a move answers) carries the same path, so a list row and the object's own answer agree.",
      by: { file: "test/integration/list-agrees-with-get.test.ts", test: "media_list" },
    },
    {
      says: "An object in the trash has none: its thumbnail is not served.",
      by: { file: "test/integration/media-folders.test.ts", test: "every answer with the object carries the same path, the trash's none; a value written like the path's mark comes back as written" },
    },
    {
      says: "a listing (media_list) gives each ready thumbnail a signed path (thumbnail.path, GET /api/thumbnails/{id}?v=&expires=&signature=) that an <img> loads without a credential",
      by: { file: "test/integration/media-folders.test.ts", test: "a listing's ready thumbnails carry a path that serves them with no credential and no rate limit" },
    },
    {
      says: "so a file another writer puts at the name meanwhile is caught too (storage answers 412 and the file asks again).",
      by: { file: "test/hardening/attack-run-a.test.ts", test: "an upload URL is dead after confirm: a second PUT of other bytes is refused" },
    },
    {
      says: "when the name is taken the file asks \"Replace, Keep both, Skip\" (with \"Apply to all\" for the files chosen together); Keep both gives it a free name (photo (2).png).",
      by: { file: MEDIA, test: "an upload onto a taken name asks: replace, keep both or skip" },
    },
    { says: "One 429 holds every request of the page until then, and thumbnails give way to the page's own calls;", by: { file: EDGES, test: "thumbnails and calls that meet a 429 wait out its Retry-After and then show" } },
    {
      says: "The check is storage's own write condition, the If-Match or If-None-Match the presigned PUT is signed with,",
      by: { file: MEDIA, test: "an upload onto a taken name asks: replace, keep both or skip" },
    },
    {
      says: "deleted objects with the time left before their purge; Restore; Purge after a confirmation.",
      by: { file: MEDIA, test: "the trash: time left, restore, purge after a confirmation" },
    },
    {
      says: "a call shows its error only after two minutes of refusals.",
      check: async () => {
        // The console's request code runs only in a browser: its patience is read from its source.
        const source = await Bun.file(new URL("../../console/app/api.ts", import.meta.url)).text();
        expect(/const RATE_LIMIT_PATIENCE_MS = ([^;]+);/.exec(source)?.[1]).toBe("120_000");
      },
    },
    {
      says: "Files over 8 MiB go in 5 MiB parts, 4 at once (presign_create_multipart, presign_upload_part per part, presign_complete_upload with the parts' ETags, then confirm); 3 files upload at once. A part that fails is tried 3 times;",
      check: async () => {
        // The console's upload module runs only in a browser: its numbers are read from its source.
        const source = await Bun.file(new URL("../../console/app/upload.ts", import.meta.url)).text();
        const constant = (name: string) => new RegExp(`const ${name} = ([^;]+);`).exec(source)?.[1];
        expect([constant("MULTIPART_THRESHOLD"), constant("PART_SIZE"), constant("PARTS_AT_ONCE"), constant("FILES_AT_ONCE"), constant("PART_ATTEMPTS")]).toEqual(["8 * 1024 * 1024", "5 * 1024 * 1024", "4", "3", "3"]);
      },
    },
    { says: "Files over 8 MiB go in 5 MiB parts,", by: { file: CONSOLE, test: "upload three files (one in parts) with a tag, and see their thumbnails" } },
    { says: "A part that fails is tried 3 times; if it still fails the file shows which parts failed and Retry sends only those.", by: { file: EDGES, test: "a part that keeps failing fails the file; Retry sends only the missing part and finishes it" } },
    {
      says: "The console's page has its own Content-Security-Policy:",
      check: async (server) => {
        const o = await org(server);
        const bucket = await newBucket(o);
        const storage = new URL((await o.admin.post("/api/presign/upload", { bucketId: bucket.id, key: "csp.txt", contentType: "text/plain" })).body.url).origin;
        const res = await fetch(`${server.url}/console`);
        await res.arrayBuffer();
        expect(res.headers.get("content-security-policy")).toBe(
          `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data: ${storage}; ` +
            `media-src 'self' blob: ${storage}; connect-src 'self' ${storage}; manifest-src 'self'; ` +
            "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        );
      },
    },
    { says: "The console's page has its own Content-Security-Policy:", by: { file: CONSOLE, test: "/ leads to the console, served with a strict CSP from this process" } },
    {
      says: "other headers are the API's (nosniff, DENY framing, no-referrer). The page itself is no-cache; the script and stylesheet are named by their content hash and cached for a year.",
      check: async (server) => {
        const page = await fetch(`${server.url}/console`);
        const html = await page.text();
        expect({
          nosniff: page.headers.get("x-content-type-options"),
          framing: page.headers.get("x-frame-options"),
          referrer: page.headers.get("referrer-policy"),
          cache: page.headers.get("cache-control"),
        }).toEqual({ nosniff: "nosniff", framing: "DENY", referrer: "no-referrer", cache: "no-cache" });
        const assets = [...html.matchAll(/(?:src|href)="(\/console\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
        expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
        expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
        for (const asset of assets) {
          // Named by a hash of the content: the name changes when the bytes do.
          expect(asset).toMatch(/[-.][0-9a-z]{8,}\.(js|css)$/);
          const res = await fetch(`${server.url}${asset}`);
          await res.arrayBuffer();
          expect([asset, res.status, res.headers.get("cache-control")]).toEqual([asset, 200, "public, max-age=31536000, immutable"]);
        }
      },
    },
    {
      says: "(about 80 KB gzipped for a first visit's scripts and stylesheet; the explorer's schemas are a further 26 KB, loaded when it opens).",
      check: async () => {
        // Measured as npm run build:console prints it; "about" allows 20% either way, so the
        // page is corrected when the console grows or shrinks by more than that.
        const { buildConsole, firstLoad } = await import("../../console/build.ts");
        const first = firstLoad(await buildConsole());
        const near = (statedKb: number, bytes: number) => Math.abs(statedKb * 1000 - bytes) <= bytes * 0.2;
        const explorer = first.later.tools ?? 0;
        expect({ first: first.gzip, firstNear: near(80, first.gzip), explorer, explorerNear: near(26, explorer) }).toEqual({
          first: first.gzip,
          firstNear: true,
          explorer,
          explorerNear: true,
        });
      },
    },
  ],
  notPromises: [
    { says: ".ci/run installs it) with playwright-core:", why: "a package name, not a header or a number" },
  ],
} satisfies PageClaims;
