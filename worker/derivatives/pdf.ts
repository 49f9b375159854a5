import { readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { THUMBNAIL_EDGE } from "../../domain/derivatives/derivatives.ts";
import { MediaError, Unsupported } from "./errors.ts";
import type { Renderer } from "./kinds.ts";
import { renderThumbnail } from "./render.ts";

export interface PdfInfo {
  pages: number;
  /** Of the first page as displayed, in points (1/72 inch). */
  pageWidth: number;
  pageHeight: number;
  title?: string;
  author?: string;
}

/** A rendered page, packed RGBA, ready for sharp (`{ raw: { width, height, channels: 4 } }`). */
export interface RawPage {
  data: Buffer;
  width: number;
  height: number;
  channels: 4;
}

// pdf.js and its canvas load on first use (about 120 ms): a server that never sees a PDF never pays it.
export const pdfjs = () => import("pdfjs-dist/legacy/build/pdf.mjs");
const canvas = () => import("@napi-rs/canvas");

/** The fonts, character maps and decoders pdf.js reads at run time, from its own package. */
export function assets(): { standardFontDataUrl: string; cMapUrl: string; wasmUrl: string } {
  const root = dirname(fileURLToPath(import.meta.resolve("pdfjs-dist/package.json")));
  return { standardFontDataUrl: `${root}/standard_fonts/`, cMapUrl: `${root}/cmaps/`, wasmUrl: `${root}/wasm/` };
}

const text = (v: unknown) => (typeof v === "string" ? v.replace(/[\u0000-\u001f\u007f]/g, "").trim().slice(0, 256) : "");

/**
 * Reads a PDF (from memory or a file) with pdf.js, in-process: its page count, first page
 * size, title and author, and, when `edge` is given, the first page rendered so its long
 * edge is `edge` pixels. No poppler on the machine. A PDF behind a password, or bytes that are
 * no PDF, fail with a reason for the user.
 */
export async function readPdf(source: Buffer | string, opts: { edge?: number; timeoutMs: number }): Promise<{ info: PdfInfo; page: RawPage | null }> {
  const { getDocument } = await pdfjs();
  const data = new Uint8Array(typeof source === "string" ? await readFile(source) : source);
  const task = getDocument({ data, verbosity: 0, cMapPacked: true, ...assets() });
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    void task.destroy();
  }, opts.timeoutMs);
  // pdf.js mostly continues in microtasks, where the timer cannot fire: each step also reads the clock.
  const deadline = Date.now() + opts.timeoutMs;
  const inTime = <T>(value: T): T => {
    if (Date.now() > deadline) expired = true;
    if (expired) throw new MediaError(`Reading the PDF took longer than ${Math.round(opts.timeoutMs / 1000)} s and was stopped`);
    return value;
  };
  try {
    const doc = inTime(await task.promise);
    if (doc.numPages < 1) throw new MediaError("The PDF has no pages");
    const { info } = inTime((await doc.getMetadata().catch(() => ({ info: {} }))) as { info: Record<string, unknown> });
    const first = inTime(await doc.getPage(1));
    const viewport = first.getViewport({ scale: 1 });
    const out: PdfInfo = { pages: doc.numPages, pageWidth: round(viewport.width), pageHeight: round(viewport.height) };
    if (text(info.Title)) out.title = text(info.Title);
    if (text(info.Author)) out.author = text(info.Author);
    if (!opts.edge) return { info: out, page: null };
    const scaled = first.getViewport({ scale: opts.edge / Math.max(viewport.width, viewport.height) });
    const { createCanvas } = await canvas();
    const surface = createCanvas(Math.max(1, Math.round(scaled.width)), Math.max(1, Math.round(scaled.height)));
    const context = surface.getContext("2d");
    // pdf.js paints on white, as a viewer shows paper.
    const render = first.render({ canvas: surface as never, canvasContext: context as never, viewport: scaled });
    // Drawing pauses between slices of the page's operators: a late one is cancelled there.
    render.onContinue = (next: () => void) => (Date.now() > deadline ? render.cancel() : next());
    inTime(await render.promise.catch((err: unknown) => (Date.now() > deadline ? undefined : Promise.reject(err))));
    const pixels = context.getImageData(0, 0, surface.width, surface.height);
    return { info: out, page: { data: Buffer.from(pixels.data.buffer, pixels.data.byteOffset, pixels.data.byteLength), width: surface.width, height: surface.height, channels: 4 } };
  } catch (err) {
    if (expired) throw new MediaError(`Reading the PDF took longer than ${Math.round(opts.timeoutMs / 1000)} s and was stopped`);
    if (err instanceof MediaError) throw err;
    throw new MediaError(pdfReason(err));
  } finally {
    clearTimeout(timer);
    await task.destroy().catch(() => {});
  }
}

function pdfReason(err: unknown): string {
  const name = (err as { name?: string })?.name;
  if (name === "PasswordException") return "The PDF is protected by a password";
  const message = err instanceof Error ? err.message : String(err);
  if (name === "InvalidPDFException") return "The file is not a valid PDF";
  return `The PDF could not be read: ${message.split("\n")[0]!.slice(0, 300)}`;
}

const round = (v: number) => Math.round(v * 100) / 100;

/** pdf.js holds a whole PDF in memory: larger ones get no thumbnail. */
export const MAX_PDF_BYTES = 256 * 1024 * 1024;

export const pdfRenderer: Renderer = {
  inMemory: true,
  async render(ctx) {
    if (!ctx.bytes && ((await stat(ctx.file).catch(() => null))?.size ?? 0) > MAX_PDF_BYTES) throw new Unsupported("PDFs larger than 256 MiB get no thumbnail");
    const { info, page } = await readPdf(ctx.bytes ?? ctx.file, { edge: THUMBNAIL_EDGE, timeoutMs: ctx.timeoutMs });
    if (!page) throw new MediaError("The first page could not be rendered");
    return { thumbnail: await renderThumbnail(page, THUMBNAIL_EDGE, ctx.limits), info: { ...info } };
  },
};
