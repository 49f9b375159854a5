import { expect } from "bun:test";
import { indexSettings } from "../../search/meili-translate.ts";
import type { PageClaims } from "./claim.ts";
import { findTool } from "../../tools/registry.ts";
import { org } from "../support/claim-checks.ts";
import { newBucket } from "../support/objects.ts";
import { upload } from "../support/upload.ts";

const MEILI = "test/unit/meili-translate.test.ts";
const TEXT = "test/integration/text-search.test.ts";

const textLimits = async () => {
  const { TEXT_LIMITS } = await import("../../domain/search/text.ts");
  expect(TEXT_LIMITS).toEqual({ pages: 200, chars: 200_000, plainBytes: 1024 * 1024 });
};

export default {
  page: "docs/search.md",
  claims: [
    {
      says: "maxDistance is 0 to 10, default 7.",
      check: async () => {
        const input = findTool("media_similar")!.input;
        expect(input.parse({ id: crypto.randomUUID() }).maxDistance).toBe(7);
        expect(input.safeParse({ id: crypto.randomUUID(), maxDistance: 10 }).success).toBe(true);
        expect(input.safeParse({ id: crypto.randomUUID(), maxDistance: 11 }).success).toBe(false);
      },
    },
    {
      says: "are also within a delta E of 25 of each other",
      check: async () => {
        const { SAME_PICTURE_DELTA_E } = await import("../../domain/media/similar.ts");
        expect(SAME_PICTURE_DELTA_E).toBe(25);
      },
    },
    {
      says: "a plain red and a plain blue picture are not similar",
      by: { file: "test/integration/similar.test.ts", test: "the same mark on red and on blue hash alike, but only the two reds are similar" },
    },
    {
      says: "0 to 10, default 4), each with its",
      check: async () => {
        const input = findTool("media_duplicates")!.input;
        expect(input.parse({ id: crypto.randomUUID() }).maxDistance).toBe(4);
        expect(input.safeParse({ id: crypto.randomUUID(), maxDistance: 11 }).success).toBe(false);
      },
    },
    {
      says: "colorTolerance is the largest distance, default 20, at most 100.",
      check: async () => {
        const { DEFAULT_COLOR_TOLERANCE } = await import("../../domain/media/colors.ts");
        expect(DEFAULT_COLOR_TOLERANCE).toBe(20);
        const input = findTool("media_list")!.input;
        expect(input.safeParse({ color: "red", colorTolerance: 100 }).success).toBe(true);
        expect(input.safeParse({ color: "red", colorTolerance: 101 }).success).toBe(false);
      },
    },
    { says: "maxValuesPerFacet: 100: the 100 values kept are the most frequent", by: { file: MEILI, test: "facet values are kept by count, not alphabetically, 100 per facet as the PostgreSQL backend" } },
    { says: "pagination.maxTotalHits is the exact limit + 1, so one hit past it tells \"more than the limit\".", by: { file: MEILI, test: "totals: exact up to the limit, a lower bound past it (maxTotalHits is the limit + 1)" } },
    {
      says: "| typos | none: sunet finds nothing | tolerated (its default): 1 typo in words of 5+ letters, 2 in 9+; sunet finds sunset |",
      check: async () => {
        // The numbers are Meilisearch's own defaults: the service's index settings leave typo tolerance alone.
        expect(Object.keys(indexSettings(10_000))).not.toContain("typoTolerance");
        expect(indexSettings(10_000).rankingRules).toContain("typo");
      },
    },
    {
      says: "| typos | none: sunet finds nothing |",
      check: async (server) => {
        const o = await org(server);
        const bucket = await newBucket(o);
        await upload(o.admin, bucket.id, "beach/sunset.jpg", "an evening", { contentType: "image/jpeg" });
        const total = async (q: string) => (await o.admin.get(`/api/search?q=${q}&bucketId=${bucket.id}`)).body.total;
        expect([await total("sunet"), await total("sunset"), await total("sun*")]).toEqual([0, 1, 1]);
      },
    },
    { says: "| file-fact filters (sha256, duplicatesOf, takenFrom, ...) | yes | 400: not indexed |", by: { file: "test/claims/docs-worker.ts", test: "backend answers 400 for them, as its documents do not carry the facts yet)." } },
    { says: "| file-fact filters (sha256, duplicatesOf, takenFrom, ...) | yes |", by: { file: "test/integration/render.test.ts", test: "the same filters narrow a full-text search (PostgreSQL backend)" } },
    { says: "each page's text with pdf.js (getTextContent), in page order, up to 200 pages and", check: textLimits },
    { says: "200,000 characters per file.", check: textLimits },
    { says: "the first 1 MiB, as UTF-8 (or UTF-16 with a byte order mark),", check: textLimits },
    { says: "invalid bytes replaced and control characters dropped, up to 200,000 characters.", check: textLimits },
    { says: "list ocrLanguagesInstalled, and a language without its model is refused with 400.", by: { file: TEXT, test: "a language without an installed model is refused" } },
    {
      says: "OCR reads a greyscale rendition at most 2,000 px on its long edge",
      check: async () => {
        const sharp = (await import("sharp")).default;
        const { ocrRendition } = await import("../../worker/derivatives/ocr.ts");
        const big = await sharp({ create: { width: 4000, height: 1000, channels: 3, background: "#c33" } }).png().toBuffer();
        const meta = await sharp(await ocrRendition(big)).metadata();
        expect([meta.width, meta.height, meta.channels]).toEqual([2000, 500, 1]);
      },
    },
    {
      says: "edges read as stray letters stay out of the index.",
      check: async () => {
        const { confidentText } = await import("../../worker/derivatives/ocr.ts");
        const words = [{ text: "kept", confidence: 60 }, { text: "dropped", confidence: 59.9 }, { text: "::", confidence: 95 }];
        expect(confidentText([{ paragraphs: [{ lines: [{ words }] }] }])).toBe("kept");
      },
    },
    { says: "same; words recognized with a confidence under 60 (of 100) are dropped, so textures and", check: async () => expect((await import("../../domain/search/text.ts")).OCR_LIMITS.minConfidence).toBe(60) },
  ],
  notPromises: [
    {
      says: "first probes the organization's first 500 rows; when 5% or more of them match, it scans",
      why: "how the statement chooses between two plans (search/postgres.ts, PROBE_ROWS and PROBE_SCAN_FROM, tuned by measurement in the peer runs, bench/notes/2026-11-28-seventh-sitting.md); the page says, and test/integration/search-exact-limit.test.ts checks, that the answers do not depend on it",
    },
  ],
} satisfies PageClaims;
