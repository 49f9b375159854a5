/**
 * PDF pages drawn in the page with pdf.js, loaded only when a PDF is opened (its own chunk).
 * Its worker is a console asset from this origin (the CSP allows scripts from here only);
 * the build names it in PDF_WORKER.
 */
declare const PDF_WORKER: string;

type PdfJs = typeof import("pdfjs-dist");
let loading: Promise<PdfJs> | undefined;

function pdfjs(): Promise<PdfJs> {
  loading ??= import("pdfjs-dist").then((m) => {
    m.GlobalWorkerOptions.workerSrc = `/console/assets/${PDF_WORKER}`;
    return m;
  });
  return loading;
}

export interface PdfDocument {
  pages: number;
  /** Draws page `n` (from 1) into the canvas at `scale` CSS pixels per PDF point. */
  draw(n: number, canvas: HTMLCanvasElement, scale: number): Promise<void>;
  close(): void;
}

export async function openPdf(url: string): Promise<PdfDocument> {
  const lib = await pdfjs();
  const task = lib.getDocument({ url, enableXfa: false });
  const doc = await task.promise;
  let rendering: { cancel(): void } | null = null;
  return {
    pages: doc.numPages,
    async draw(n, canvas, scale) {
      rendering?.cancel();
      const page = await doc.getPage(n);
      const ratio = window.devicePixelRatio || 1;
      const viewport = page.getViewport({ scale: scale * ratio });
      canvas.width = Math.floor(viewport.width);
      canvas.height = Math.floor(viewport.height);
      canvas.style.width = `${Math.floor(viewport.width / ratio)}px`;
      canvas.style.height = `${Math.floor(viewport.height / ratio)}px`;
      const task = page.render({ canvas, viewport });
      rendering = task;
      try {
        await task.promise;
      } catch (err) {
        // A newer draw cancelled this one: not an error.
        if ((err as Error).name !== "RenderingCancelledException") throw err;
      }
    },
    close() {
      void task.destroy();
    },
  };
}
