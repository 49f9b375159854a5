import { describe, expect, test } from "bun:test";
import { TEXT_LIMITS } from "../../domain/search/text.ts";
import { isPlainText } from "../../domain/search/text.ts";
import { MediaError } from "../../worker/derivatives/errors.ts";
import { pdfText, plainText } from "../../worker/derivatives/text.ts";
import { textPdf } from "../support/text-files.ts";

describe("PDF text", () => {
  test("page by page, numbered, stopping at the character cap", async () => {
    const long = "words ".repeat(60).trim();
    const pdf = textPdf(Array.from({ length: 260 }, (_, p) => Array.from({ length: 20 }, (_, j) => `p${p + 1} l${j} ${long}`)));
    const pages = await pdfText(pdf, { timeoutMs: 60_000 });
    expect(pages[0]!.page).toBe(1);
    expect(pages[0]!.text.startsWith("p1 l0 words")).toBe(true);
    expect(pages.map((p) => p.page)).toEqual(pages.map((_, i) => i + 1));
    expect(pages.reduce((n, p) => n + p.text.length, 0)).toBe(TEXT_LIMITS.chars);
    expect(pages.length).toBeLessThan(TEXT_LIMITS.pages);
  });

  test("stops at the page cap", async () => {
    const pages = await pdfText(textPdf(Array.from({ length: TEXT_LIMITS.pages + 5 }, (_, p) => [`page ${p + 1}`])), { timeoutMs: 60_000 });
    expect(pages.length).toBe(TEXT_LIMITS.pages);
    expect(pages.at(-1)).toEqual({ page: TEXT_LIMITS.pages, text: `page ${TEXT_LIMITS.pages}` });
  });

  test("past its deadline: a MediaError, not a hang", async () => {
    const pdf = textPdf(Array.from({ length: 150 }, (_, p) => Array.from({ length: 40 }, (_, j) => `line ${p} ${j}`)));
    expect(await pdfText(pdf, { timeoutMs: 1 }).catch((e) => e)).toBeInstanceOf(MediaError);
  });

  test("bytes that are no PDF: a MediaError", async () => {
    expect(await pdfText(new TextEncoder().encode("not a pdf at all"), { timeoutMs: 10_000 }).catch((e) => e)).toBeInstanceOf(MediaError);
  });
});

describe("plain text", () => {
  test("UTF-8, with invalid bytes and control characters out", () => {
    expect(plainText(new Uint8Array([...new TextEncoder().encode("héllo\u0007 wörld "), 0xff, ...new TextEncoder().encode("end")]))).toBe("héllo wörld end");
  });
  test("UTF-16 with a byte order mark", () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("zebra crossing", "utf16le")]);
    expect(plainText(le)).toBe("zebra crossing");
  });
  test("NULs or mostly undecodable bytes are not text", () => {
    expect(plainText(new Uint8Array([104, 105, 0, 104, 105]))).toBeNull();
    expect(plainText(new Uint8Array(Array.from({ length: 100 }, (_, i) => 0x80 + (i % 60))))).toBeNull();
  });
  test("which files count as text", () => {
    expect(["text/plain", "text/markdown; charset=utf-8", "application/json", "application/ld+json", "text/csv"].every((t) => isPlainText(t, "x"))).toBe(true);
    expect(isPlainText("application/octet-stream", "notes/readme.md")).toBe(true);
    expect(isPlainText("application/octet-stream", "blob.bin")).toBe(false);
    expect(isPlainText("application/zip", "a.txt")).toBe(false);
  });
});
