import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ocrModelsRoot } from "../../domain/search/ocr-models.ts";
import sharp from "sharp";
import { OCR_LIMITS } from "../../domain/search/text.ts";
import { MediaError } from "./errors.ts";

type TesseractWorker = Awaited<ReturnType<typeof import("tesseract.js").createWorker>>;

/**
 * One tesseract.js worker (a thread) per language set, kept for the process: loading the model
 * costs about a second and a half. Calls take turns on it, so OCR uses one core per language
 * set however many jobs ask at once. `langPath` is the model package on disk and nothing is
 * cached elsewhere, so no run ever reaches the network.
 */
const workers = new Map<string, Promise<TesseractWorker>>();
const turns = new Map<string, Promise<unknown>>();

async function workerFor(langs: string[]): Promise<TesseractWorker> {
  const key = langs.join("+");
  let w = workers.get(key);
  if (!w) {
    w = (async () => {
      const { createWorker, OEM } = await import("tesseract.js");
      const cachePath = join(tmpdir(), "media-ocr-cache");
      mkdirSync(cachePath, { recursive: true });
      return createWorker(langs, OEM.LSTM_ONLY, {
        langPath: modelFolder(langs),
        cachePath,
        cacheMethod: "none",
        gzip: true,
      });
    })();
    w.catch(() => workers.delete(key));
    workers.set(key, w);
  }
  return w;
}

/**
 * tesseract.js reads every language from one folder, and each model is its own package: a
 * folder of links to the packages' best_int models (the integer LSTM models the default
 * engine, LSTM only, is fastest with).
 */
function modelFolder(langs: string[]): string {
  const dir = join(tmpdir(), `media-ocr-models-${process.pid}`, langs.join("+"));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const lang of langs) symlinkSync(join(ocrModelsRoot(), lang, "4.0.0_best_int", `${lang}.traineddata.gz`), join(dir, `${lang}.traineddata.gz`));
  return dir;
}

/**
 * Words OCR read with at least OCR_LIMITS.minConfidence, as lines of text (empty when none).
 * A recognition still running after `timeoutMs` (counted from its turn) is stopped with its
 * thread, which the next call replaces: a stuck thread would otherwise hold every later image.
 */
export async function ocrImage(bytes: Uint8Array, langs: string[], timeoutMs = 120_000): Promise<string> {
  const image = await ocrRendition(bytes);
  const key = langs.join("+");
  const run = (turns.get(key) ?? Promise.resolve()).catch(() => {}).then(async () => {
    const worker = await workerFor(langs);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new MediaError(`Reading the image's text took longer than ${Math.round(timeoutMs / 1000)} s and was stopped`)), timeoutMs);
    });
    try {
      return await Promise.race([worker.recognize(image, {}, { blocks: true, text: false }), expired]);
    } catch (err) {
      if (err instanceof MediaError) {
        workers.delete(key);
        void worker.terminate().catch(() => {});
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  });
  turns.set(key, run);
  const { data } = await run;
  return confidentText(data.blocks ?? []);
}

/**
 * What OCR reads: the image turned upright, at most OCR_LIMITS.edge pixels on its long edge and
 * greyscale. A bounded size bounds the time a photo of any size takes.
 */
export async function ocrRendition(bytes: Uint8Array): Promise<Buffer> {
  return sharp(bytes, { limitInputPixels: OCR_LIMITS.maxInputPixels })
    .rotate()
    .resize({ width: OCR_LIMITS.edge, height: OCR_LIMITS.edge, fit: "inside", withoutEnlargement: true })
    .greyscale()
    // One channel in the PNG too: sharp keeps three unless told, a third of the bytes to encode and decode.
    .toColourspace("b-w")
    .png({ compressionLevel: 1 })
    .toBuffer();
}

type Block = { paragraphs: Array<{ lines: Array<{ words: Array<{ text: string; confidence: number }> }> }> };

/** Lines of the words at or above the confidence floor: a texture read as "ii:;" stays out of the index. */
export function confidentText(blocks: Block[]): string {
  const lines: string[] = [];
  for (const b of blocks)
    for (const p of b.paragraphs)
      for (const l of p.lines) {
        const words = l.words.filter((w) => w.confidence >= OCR_LIMITS.minConfidence && /[\p{L}\p{N}]/u.test(w.text)).map((w) => w.text.trim());
        if (words.length) lines.push(words.join(" "));
      }
  return lines.join("\n");
}

/** Ends the OCR threads (tests and shutdown). */
export async function stopOcr(): Promise<void> {
  const all = [...workers.values()];
  workers.clear();
  turns.clear();
  await Promise.all(all.map(async (w) => (await w.catch(() => null))?.terminate()));
}
