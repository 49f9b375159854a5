import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Decoder, Demuxer, Encoder, FilterAPI, Muxer, pipeline } from "node-av/api";
import { AV_LOG_QUIET, AV_PKT_DATA_DISPLAYMATRIX, type FFEncoderCodec } from "node-av/constants";
import { Dictionary, type FormatContext, Log } from "node-av/lib";
import sharp from "sharp";
import { pdfFile } from "./pdf-file.ts";

/**
 * Real media files, made on the spot: nothing binary is committed, and each is what it claims.
 * Audio and video are encoded with node-av's FFmpeg libraries, so no ffmpeg is needed.
 */

// The encoders' progress reports are noise in test output.
Log.setLevel(AV_LOG_QUIET);

/** A PNG with a diagonal gradient (so it compresses like a picture, not like a flat fill). */
export async function png(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      raw[i] = (x * 255) / width;
      raw[i + 1] = (y * 255) / height;
      raw[i + 2] = ((x + y) * 127) / (width + height);
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

/** A JPEG stored width x height whose EXIF says to display it turned (orientation 6: a quarter clockwise). */
export async function orientedJpeg(width: number, height: number, orientation = 6): Promise<Buffer> {
  return sharp(await png(width, height))
    .jpeg({ quality: 85 })
    .withExif({ IFD0: { Make: "TestCam", Model: "T-1000", DateTime: "2024:05:01 12:30:00" }, IFD2: { ExposureTime: "1/250", FNumber: "28/10", ISOSpeedRatings: "200" } })
    .withMetadata({ orientation })
    .toBuffer();
}

/**
 * Encodes what an FFmpeg "lavfi" source description draws (test patterns, tones) with the
 * FFmpeg libraries node-av carries: no ffmpeg command on the machine. `streams` sets up the
 * output streams before the header is written (a display matrix, metadata).
 */
async function encode(source: string, encoder: string, ext: string, opts: { filter?: string; options?: Record<string, string>; gop?: number; configure?: (fmt: FormatContext) => void } = {}): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), "media-fixture-"));
  try {
    const out = join(dir, `out.${ext}`);
    {
      await using input = await Demuxer.open(source, { format: "lavfi" });
      using decoder = await Decoder.create(input.streams[0]!);
      using enc = await Encoder.create(encoder as FFEncoderCodec, { decoder, autoResample: true, options: opts.options, ...(opts.gop ? { context: { gopSize: opts.gop } } : {}) } as never);
      await using output = await Muxer.open(out, opts.configure ? { configure: opts.configure } : {});
      if (opts.filter) {
        using filter = FilterAPI.create(opts.filter);
        await pipeline(input, decoder, filter, enc, output).completion;
      } else {
        await pipeline(input, decoder, enc, output).completion;
      }
    }
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** FFmpeg's test pattern, H.264 in MP4, a keyframe every second; `tags` go into the container (creation_time...). */
export const mp4 = (seconds = 2, size = "320x240", tags?: Record<string, string>) =>
  encode(`testsrc=duration=${seconds}:size=${size}:rate=25`, "libx264", "mp4", {
    filter: "format=yuv420p",
    options: { preset: "ultrafast" },
    gop: 25,
    ...(tags ? { configure: (fmt: FormatContext) => void (fmt.metadata = Dictionary.fromObject(tags)) } : {}),
  });

/**
 * A video that starts black: `black` seconds of black, then `seconds` of the test pattern (as
 * films open on a fade-in). A keyframe every second, so each part has keyframes.
 */
export const fadeInMp4 = (black = 2, seconds = 4, size = "320x240") =>
  encode(`color=c=black:s=${size}:r=25:d=${black}[a];testsrc=s=${size}:r=25:d=${seconds}[b];[a][b]concat=n=2[out0]`, "libx264", "mp4", {
    filter: "format=yuv420p",
    options: { preset: "ultrafast" },
    gop: 25,
  });

/** A sine tone, 16-bit PCM WAV. */
export const wav = (seconds = 2) => encode(`sine=frequency=440:duration=${seconds}`, "pcm_s16le", "wav");

/** A sine tone, MP3, tagged with a title and artist. */
export const mp3 = (seconds = 2) =>
  encode(`sine=frequency=440:duration=${seconds}`, "libmp3lame", "mp3", {
    configure: (fmt) => {
      fmt.metadata = Dictionary.fromObject({ title: "Tone", artist: "Test Signal" });
    },
  });

/**
 * A valid PDF written by hand (ImageMagick's policy on Debian refuses to write PDFs): `pages`
 * pages of width x height points, each with a filled rectangle, and a correct xref table.
 */
export function pdf(pages = 2, width = 612, height = 792, info?: { title?: string; author?: string }): Buffer {
  const objects: string[] = [];
  const kids = Array.from({ length: pages }, (_, i) => `${3 + i * 2} 0 R`).join(" ");
  objects.push("<< /Type /Catalog /Pages 2 0 R >>");
  objects.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`);
  for (let i = 0; i < pages; i++) {
    const content = `0.2 0.4 0.8 rg 40 40 ${width - 80} ${height / 3} re f`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${width} ${height}] /Contents ${4 + i * 2} 0 R >>`);
    objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  }
  const fields = Object.entries(info ?? {}).map(([k, v]) => `/${k[0]!.toUpperCase()}${k.slice(1)} (${v})`);
  if (fields.length > 0) objects.push(`<< ${fields.join(" ")} >>`);
  return pdfFile(objects, fields.length > 0 ? ` /Info ${objects.length} 0 R` : "");
}

/** A JPEG from a camera that knew where it was: make, model, time taken and a GPS position (Paris). */
export async function gpsJpeg(width = 400, height = 300): Promise<Buffer> {
  return sharp(await png(width, height))
    .jpeg({ quality: 85 })
    .withExif({
      IFD0: { Make: "GeoCam", Model: "G-1" },
      IFD2: { DateTimeOriginal: "2023:07:14 09:30:00", ISOSpeedRatings: "100" },
      IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 2990/100", GPSLongitudeRef: "E", GPSLongitude: "2/1 17/1 4000/100" },
    })
    .toBuffer();
}

/** A PNG whose left half is red and right half blue: which side a crop kept is plain to see. */
export function halves(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) raw[(y * width + x) * 3 + (x < width / 2 ? 0 : 2)] = 255;
  return sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

/** Width and height of an image's bytes. */
export async function dimensions(bytes: Uint8Array): Promise<{ width: number; height: number; format: string }> {
  const m = await sharp(bytes).metadata();
  return { width: m.width!, height: m.height!, format: m.format! };
}

/** An MP4 whose display matrix says to turn it a quarter (as phones record portrait video). */
export function rotatedMp4(rotation = 90): Promise<Buffer> {
  return encode("testsrc=duration=1:size=320x240:rate=25", "libx264", "mp4", {
    filter: "format=yuv420p",
    options: { preset: "ultrafast" },
    configure: (fmt) => fmt.streams![0]!.codecpar.addCodedSideData(AV_PKT_DATA_DISPLAYMATRIX, displayMatrix(rotation)),
  });
}

/** The 3x3 fixed-point display matrix ffmpeg writes for a `rotate=<degrees>` stream tag. */
function displayMatrix(degrees: number): Buffer {
  const r = (degrees * Math.PI) / 180;
  const [c, s] = [Math.round(Math.cos(r)), Math.round(Math.sin(r))];
  const m = new Int32Array([c * 65536, -s * 65536, 0, s * 65536, c * 65536, 0, 0, 0, 1 << 30]);
  return Buffer.from(m.buffer);
}

/**
 * A decompression bomb: a few hundred bytes of PNG whose header claims width x height pixels
 * (one all-zero row, repeated by nothing: the decoder would have to invent the rest).
 */
export function bombPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([head, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  const idat = Bun.deflateSync(new Uint8Array(Math.ceil(width / 8) + 1));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", Buffer.from(zlibWrap(idat))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** PNG wants a zlib stream (header + deflate + Adler-32); Bun.deflateSync gives raw deflate. */
function zlibWrap(raw: Uint8Array): Uint8Array {
  const out = new Uint8Array(raw.length + 6);
  out.set([0x78, 0x9c]);
  out.set(raw, 2);
  // Adler-32 of the uncompressed data is not checked before the size limit trips; zeros do.
  return out;
}

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}
