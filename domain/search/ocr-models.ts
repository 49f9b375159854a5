import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

/** Where the @tesseract.js-data/<lang> packages are installed: OCR models are read from there, never downloaded. */
export function ocrModelsRoot(): string {
  return dirname(dirname(fileURLToPath(import.meta.resolve("@tesseract.js-data/eng/package.json"))));
}

/** The OCR languages whose model package is installed (`eng` always: it is a dependency); another is `npm install @tesseract.js-data/<lang>`. */
export function installedOcrLanguages(): string[] {
  try {
    return readdirSync(ocrModelsRoot())
      .filter((d) => /^[a-z_]+$/.test(d))
      .sort();
  } catch {
    return [];
  }
}
