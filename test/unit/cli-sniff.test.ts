import { expect, test } from "bun:test";
import { detectContentType, sniffBytes } from "../../cli/sniff.ts";

const b = (...parts: (string | number[])[]) => {
  const out: number[] = [];
  for (const p of parts) out.push(...(typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p));
  return new Uint8Array([...out, ...new Array(64).fill(0)]);
};
const ftyp = (major: string, ...compatible: string[]) => b([0, 0, 0, 16 + 4 * compatible.length], "ftyp", major, [0, 0, 0, 0], ...compatible);

test("magic numbers of common image, video, audio, PDF and 3D formats", () => {
  const cases: [Uint8Array, string][] = [
    [b([0xff, 0xd8, 0xff, 0xe0]), "image/jpeg"],
    [b([0x89], "PNG", [0x0d, 0x0a, 0x1a, 0x0a]), "image/png"],
    [b("GIF89a"), "image/gif"],
    [b("RIFF", [1, 2, 3, 4], "WEBPVP8 "), "image/webp"],
    [b("RIFF", [1, 2, 3, 4], "WAVEfmt "), "audio/wav"],
    [b("RIFF", [1, 2, 3, 4], "AVI LIST"), "video/x-msvideo"],
    [b("II*", [0]), "image/tiff"],
    [b("MM", [0], "*"), "image/tiff"],
    [ftyp("heic", "mif1", "heic"), "image/heic"],
    [ftyp("avif", "mif1", "avif"), "image/avif"],
    [ftyp("mif1", "avif"), "image/avif"],
    [ftyp("isom", "iso2", "avc1", "mp41"), "video/mp4"],
    [ftyp("qt  ", "qt  "), "video/quicktime"],
    [ftyp("M4A ", "M4A ", "mp42"), "audio/mp4"],
    [b([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 1, 0x42, 0x82, 0x84], "webm"), "video/webm"],
    [b([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 1, 0x42, 0x82, 0x88], "matroska"), "video/x-matroska"],
    [b("OggS", [0, 2], "OpusHead"), "audio/ogg"],
    [b("fLaC"), "audio/flac"],
    [b("ID3", [4, 0]), "audio/mpeg"],
    [b([0xff, 0xfb, 0x90, 0x64]), "audio/mpeg"],
    [b([0xff, 0xf1, 0x50, 0x80]), "audio/aac"],
    [b("%PDF-1.7"), "application/pdf"],
    [b("glTF", [2, 0, 0, 0]), "model/gltf-binary"],
    [b('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg">'), "image/svg+xml"],
  ];
  for (const [bytes, type] of cases) expect({ type: sniffBytes(bytes), bytes: [...bytes.slice(0, 12)] }).toEqual({ type, bytes: [...bytes.slice(0, 12)] });
  expect(sniffBytes(new TextEncoder().encode("just some text"))).toBeNull();
  expect(sniffBytes(new Uint8Array())).toBeNull();
});

test("the bytes win over a wrong extension; the extension decides when the bytes say nothing or only 'ZIP'", () => {
  expect(detectContentType(b([0x89], "PNG", [0x0d, 0x0a, 0x1a, 0x0a]), "photo.jpg")).toBe("image/png");
  expect(detectContentType(b([0xff, 0xd8, 0xff]), "no-extension")).toBe("image/jpeg");
  expect(detectContentType(new TextEncoder().encode("a,b\n1,2\n"), "table.csv")).toBe("text/csv");
  expect(detectContentType(b("PK", [3, 4]), "report.docx")).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
  // an ISO file is "MP4" by its bytes; a .m4v or .m4a name says more
  expect(detectContentType(ftyp("isom", "mp41"), "clip.m4v")).toBe("video/x-m4v");
  expect(detectContentType(new TextEncoder().encode("???"), "unknown")).toBeNull();
});
