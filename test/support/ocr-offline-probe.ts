/**
 * Run by test/integration/ocr-offline.test.ts in a process with no network: OCR of an image
 * made here, printed as JSON. It fails if reading the model needed anything but the disk.
 */
import { ocrImage, stopOcr } from "../../worker/derivatives/ocr.ts";
import { textImage } from "./text-files.ts";

const text = await ocrImage(await textImage(["Offline heron 2026"]), ["eng"]);
await stopOcr();
console.log(JSON.stringify({ text }));
