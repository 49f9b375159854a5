import mime from "mime";

/** How many leading bytes `sniff` looks at. */
export const SNIFF_BYTES = 4096;

const ascii = (b: Uint8Array, at: number, text: string) => {
  if (b.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (b[at + i] !== text.charCodeAt(i)) return false;
  return true;
};
const bytes = (b: Uint8Array, at: number, values: number[]) => values.every((v, i) => b[at + i] === v);

/** ISO base media (MP4, MOV, HEIC, AVIF, M4A, 3GP) by major and compatible brands. */
function isoBmff(b: Uint8Array): string | null {
  if (!ascii(b, 4, "ftyp")) return null;
  const boxSize = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
  const brands: string[] = [];
  for (let at = 8; at + 4 <= Math.min(boxSize || 32, b.length, 64); at += 4) {
    if (at === 12) continue; // minor version
    brands.push(String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!));
  }
  const major = brands[0] ?? "";
  const has = (...names: string[]) => brands.some((x) => names.includes(x));
  if (major === "avif" || major === "avis") return "image/avif";
  if (["heic", "heix", "heim", "heis", "hevc", "hevx"].includes(major)) return "image/heic";
  if (major === "mif1" || major === "msf1") return has("avif", "avis") ? "image/avif" : "image/heif";
  if (major === "qt  ") return "video/quicktime";
  if (major === "M4A " || major === "M4B " || major === "M4P ") return "audio/mp4";
  if (major.startsWith("3g2")) return "video/3gpp2";
  if (major.startsWith("3gp")) return "video/3gpp";
  return "video/mp4";
}

/**
 * The content type a file's first bytes announce (magic numbers of common image, video,
 * audio, PDF and 3D formats), or null when they say nothing recognisable.
 */
export function sniffBytes(b: Uint8Array): string | null {
  if (bytes(b, 0, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (bytes(b, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a")) return "image/gif";
  if (ascii(b, 0, "RIFF")) {
    if (ascii(b, 8, "WEBP")) return "image/webp";
    if (ascii(b, 8, "WAVE")) return "audio/wav";
    if (ascii(b, 8, "AVI ")) return "video/x-msvideo";
  }
  if (ascii(b, 0, "FORM") && (ascii(b, 8, "AIFF") || ascii(b, 8, "AIFC"))) return "audio/aiff";
  if (bytes(b, 0, [0x49, 0x49, 0x2a, 0x00]) || bytes(b, 0, [0x4d, 0x4d, 0x00, 0x2a])) return "image/tiff";
  if (ascii(b, 0, "BM") && b.length >= 14 && bytes(b, 6, [0, 0, 0, 0])) return "image/bmp";
  if (bytes(b, 0, [0xff, 0x0a]) || bytes(b, 0, [0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20])) return "image/jxl";
  if (ascii(b, 0, "8BPS")) return "image/vnd.adobe.photoshop";
  const iso = isoBmff(b);
  if (iso) return iso;
  if (bytes(b, 0, [0x1a, 0x45, 0xdf, 0xa3])) return indexOf(b, "webm", 64) >= 0 ? "video/webm" : "video/x-matroska";
  if (ascii(b, 0, "OggS")) {
    if (indexOf(b, "theora", 64) >= 0) return "video/ogg";
    return "audio/ogg";
  }
  if (ascii(b, 0, "fLaC")) return "audio/flac";
  if (ascii(b, 0, "ID3")) return "audio/mpeg";
  if (ascii(b, 0, "MThd")) return "audio/midi";
  if (b[0] === 0xff && b.length > 1) {
    if ((b[1]! & 0xf6) === 0xf0) return "audio/aac"; // ADTS: sync + layer 00
    if ((b[1]! & 0xe0) === 0xe0 && (b[1]! & 0x06) !== 0) return "audio/mpeg"; // MPEG audio frame sync + layer
  }
  if (b.length > 376 && b[0] === 0x47 && b[188] === 0x47 && b[376] === 0x47) return "video/mp2t";
  if (ascii(b, 0, "%PDF-")) return "application/pdf";
  if (ascii(b, 0, "glTF")) return "model/gltf-binary";
  const head = new TextDecoder("utf-8", { fatal: false }).decode(b.subarray(0, 1024)).trimStart();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(head)) return "image/svg+xml";
  return null;
}

function indexOf(b: Uint8Array, text: string, limit: number): number {
  const end = Math.min(b.length - text.length, limit);
  for (let i = 0; i <= end; i++) if (ascii(b, i, text)) return i;
  return -1;
}

/** Containers whose real type the extension tells better (a .docx, .usdz or .3mf is a ZIP). */
const CONTAINERS = new Set(["application/zip", "application/gzip"]);

/**
 * The content type to upload with: the bytes' magic number first, then the file name's
 * extension, else null (the server then picks one from the key).
 */
export function detectContentType(head: Uint8Array, fileName: string): string | null {
  const fromBytes = sniffBytes(head);
  const fromName = mime.getType(fileName);
  if (fromBytes && !CONTAINERS.has(fromBytes)) {
    // The bytes say "MP4" for any ISO file; an .m4a or .m4v name is more precise.
    if (fromBytes === "video/mp4" && fromName && (fromName.startsWith("audio/") || fromName.startsWith("video/"))) return fromName;
    return fromBytes;
  }
  return fromName ?? fromBytes;
}

export async function detectFileContentType(path: string, fileName: string = path): Promise<string | null> {
  const head = new Uint8Array(await Bun.file(path).slice(0, SNIFF_BYTES).arrayBuffer());
  return detectContentType(head, fileName);
}
