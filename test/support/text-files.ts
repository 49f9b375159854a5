import sharp from "sharp";
import { pdfFile } from "./pdf-file.ts";

/**
 * A PDF whose pages carry the given lines of text (Helvetica, a standard font every reader
 * has), with a correct xref table: what a scanner-free office PDF looks like to pdf.js.
 */
export function textPdf(pages: string[][]): Buffer {
  const objects: string[] = [];
  const kids = pages.map((_, i) => `${4 + i * 2} 0 R`).join(" ");
  objects.push("<< /Type /Catalog /Pages 2 0 R >>");
  objects.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`);
  objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  pages.forEach((lines) => {
    const escaped = lines.map((l) => `(${l.replace(/[\\()]/g, (c) => `\\${c}`)}) Tj T*`).join(" ");
    const content = `BT /F1 14 Tf 16 TL 72 720 Td ${escaped} ET`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${objects.length + 2} 0 R >>`);
    objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  });
  return pdfFile(objects);
}

/** A PNG of dark words on a light background in a large clear font, as a screenshot shows them. */
export async function textImage(lines: string[], width = 900, height = 120 + lines.length * 90): Promise<Buffer> {
  const text = lines.map((l, i) => `<text x="40" y="${100 + i * 90}" font-family="DejaVu Sans, Arial, sans-serif" font-size="64" fill="#111">${l}</text>`).join("");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#f4f4f0"/>${text}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}
