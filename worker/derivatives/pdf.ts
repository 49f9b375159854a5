import { stat } from "node:fs/promises";
import { join } from "node:path";
import { THUMBNAIL_EDGE } from "../../domain/derivatives/derivatives.ts";
import { MediaError } from "./errors.ts";
import { runTool } from "./exec.ts";
import type { Renderer } from "./kinds.ts";
import { renderThumbnail } from "./render.ts";

export interface PdfInfo {
  pages: number | null;
  /** Of the first page, in points (1/72 inch). */
  pageWidth: number | null;
  pageHeight: number | null;
  title?: string;
  author?: string;
}

/** `pdfinfo` prints "Key:   value" lines. */
export function parsePdfInfo(text: string): PdfInfo {
  const fields = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^([A-Za-z ]+):\s*(.*)$/.exec(line);
    if (m) fields.set(m[1]!.trim().toLowerCase(), m[2]!.trim());
  }
  const pages = Number.parseInt(fields.get("pages") ?? "", 10);
  const size = /^([\d.]+) x ([\d.]+)/.exec(fields.get("page size") ?? "");
  const out: PdfInfo = {
    pages: Number.isFinite(pages) ? pages : null,
    pageWidth: size ? Number(size[1]) : null,
    pageHeight: size ? Number(size[2]) : null,
  };
  const title = fields.get("title");
  const author = fields.get("author");
  if (title) out.title = title.slice(0, 256);
  if (author) out.author = author.slice(0, 256);
  return out;
}

export const pdfRenderer: Renderer = {
  needs: ["pdfinfo", "pdftoppm"],
  async render(ctx) {
    const opts = { timeoutMs: ctx.timeoutMs, redact: ctx.dir };
    const info = parsePdfInfo((await runTool(ctx.tools.pdfinfo!, ["-enc", "UTF-8", ctx.file], opts)).toString("utf8"));
    if (info.pages === 0) throw new MediaError("The PDF has no pages");
    const prefix = join(ctx.dir, "page");
    await runTool(ctx.tools.pdftoppm!, ["-f", "1", "-l", "1", "-png", "-scale-to", String(THUMBNAIL_EDGE), "-singlefile", ctx.file, prefix], opts);
    if (!(await stat(`${prefix}.png`).catch(() => null))?.size) throw new MediaError("The first page could not be rendered");
    return { thumbnail: await renderThumbnail(`${prefix}.png`, THUMBNAIL_EDGE, ctx.limits), info: { ...info } };
  },
};
