import { TEXT_LIMITS, type TextPage } from "../../domain/search/text.ts";
import { MediaError } from "./errors.ts";
import { assets, pdfjs } from "./pdf.ts";

/**
 * A PDF's text, page by page, with pdf.js (`getTextContent`), in-process. Reading stops at
 * TEXT_LIMITS.pages pages or TEXT_LIMITS.chars characters, whichever comes first; pages with
 * no text (scans) give no row. Items pdf.js marks as ending a line become line breaks, the
 * rest are joined with spaces as pdf.js places them.
 */
export async function pdfText(bytes: Uint8Array, opts: { timeoutMs: number }): Promise<TextPage[]> {
  const { getDocument } = await pdfjs();
  // pdf.js takes the buffer over (it detaches it): give it a copy.
  const task = getDocument({ data: new Uint8Array(bytes), verbosity: 0, cMapPacked: true, ...assets() });
  const deadline = Date.now() + opts.timeoutMs;
  const late = () => new MediaError(`Reading the PDF's text took longer than ${Math.round(opts.timeoutMs / 1000)} s and was stopped`);
  // Parsing may not return to the page loop in time: destroying the task makes its awaits fail.
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    void task.destroy();
  }, opts.timeoutMs);
  try {
    const doc = await task.promise;
    const pages: TextPage[] = [];
    let left = TEXT_LIMITS.chars;
    for (let n = 1; n <= Math.min(doc.numPages, TEXT_LIMITS.pages) && left > 0; n++) {
      if (Date.now() > deadline) throw late();
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = "";
      for (const item of content.items) {
        if (!("str" in item)) continue;
        text += item.str + (item.hasEOL ? "\n" : item.str && !item.str.endsWith(" ") ? " " : "");
      }
      page.cleanup();
      text = clean(text).slice(0, left);
      if (text) {
        pages.push({ page: n, text });
        left -= text.length;
      }
    }
    return pages;
  } catch (err) {
    if (expired) throw late();
    if (err instanceof MediaError) throw err;
    const name = (err as { name?: string })?.name;
    if (name === "PasswordException") throw new MediaError("The PDF is protected by a password");
    throw new MediaError("The PDF's text could not be read");
  } finally {
    clearTimeout(timer);
    await task.destroy().catch(() => {});
  }
}

/**
 * A plain text file's text: UTF-8 (a BOM for UTF-16 is honoured), invalid bytes replaced,
 * control characters dropped, cut at TEXT_LIMITS.chars. Bytes with NULs or mostly
 * undecodable are not text: null.
 */
export function plainText(bytes: Uint8Array): string | null {
  const head = bytes.subarray(0, TEXT_LIMITS.plainBytes);
  const utf16 = head[0] === 0xff && head[1] === 0xfe ? "utf-16le" : head[0] === 0xfe && head[1] === 0xff ? "utf-16be" : null;
  if (!utf16 && head.subarray(0, 8192).includes(0)) return null;
  const decoded = new TextDecoder(utf16 ?? "utf-8", { fatal: false }).decode(head);
  const bad = (decoded.match(/\uFFFD/g) ?? []).length;
  if (bad > decoded.length / 10) return null;
  return clean(decoded).slice(0, TEXT_LIMITS.chars) || null;
}

/** Control characters (but line breaks and tabs) out, runs of spaces folded. */
const clean = (s: string) =>
  s
    .normalize("NFC")
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f\uFFFD]/g, " ")
    .replace(/[ \t]+/g, " ")
    .replace(/\s*\n\s*/g, "\n")
    .trim();
