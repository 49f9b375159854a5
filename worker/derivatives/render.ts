import sharp, { type Sharp } from "sharp";
import { MediaError } from "./errors.ts";

// Every job decodes a different file: libvips' operation cache would only hold memory.
sharp.cache(false);

export interface RenderedImage {
  bytes: Buffer;
  width: number;
  height: number;
  contentType: "image/webp";
}

export interface SourcePicture {
  bytes: Buffer;
  contentType: "image/jpeg" | "image/png";
  width: number;
  height: number;
}

export interface RenderLimits {
  /** Images with more pixels are refused before decoding: a small file can claim gigapixels. */
  maxPixels: number;
}

/**
 * Decoded pixels (a video frame, a rendered PDF page), with the quarter turns (clockwise)
 * and mirroring that show them upright.
 */
export interface RawImage {
  data: Buffer;
  width: number;
  height: number;
  channels: 3 | 4;
  turn?: number;
  flop?: boolean;
}

/** A file path (large inputs stay on disk), an encoded image in memory, or decoded pixels. */
export type ImageInput = string | Buffer | RawImage;

export function isRaw(input: ImageInput): input is RawImage {
  return typeof input === "object" && !Buffer.isBuffer(input);
}

export function openImage(input: ImageInput, limits: RenderLimits): Sharp {
  if (isRaw(input)) {
    const { data, width, height, channels } = input;
    const s = sharp(data, { raw: { width, height, channels }, limitInputPixels: limits.maxPixels });
    if (input.flop) s.flop();
    return input.turn ? s.rotate(input.turn) : s;
  }
  // failOn "warning": a truncated JPEG or PNG is a broken file, not a half-grey thumbnail.
  return sharp(input, { limitInputPixels: limits.maxPixels, failOn: "warning" }).rotate();
}

const open = openImage;

/**
 * The thumbnail: long edge at most `edge` (never enlarged), EXIF orientation applied,
 * metadata stripped (no EXIF or GPS travels with it), WebP.
 */
export async function renderThumbnail(input: ImageInput, edge: number, limits: RenderLimits): Promise<RenderedImage> {
  try {
    const { data, info } = await open(input, limits)
      .resize(edge, edge, { fit: "inside", withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer({ resolveWithObject: true });
    return { bytes: data, width: info.width, height: info.height, contentType: "image/webp" };
  } catch (err) {
    throw decodeError(err, limits);
  }
}

/** The picture renders are cut from: JPEG for video frames, PNG for pages (crisp text). */
export async function renderSource(input: RawImage, limits: RenderLimits, format: "jpeg" | "png"): Promise<SourcePicture> {
  try {
    const pipeline = openImage(input, limits);
    const { data, info } = await (format === "jpeg" ? pipeline.jpeg({ quality: 90 }) : pipeline.png({ compressionLevel: 2 })).toBuffer({ resolveWithObject: true });
    return { bytes: data, width: info.width, height: info.height, contentType: format === "jpeg" ? "image/jpeg" : "image/png" };
  } catch (err) {
    throw decodeError(err, limits);
  }
}

export type CoverFormat = "webp" | "jpeg" | "png";

/**
 * A rendition at exactly width x height: scaled to cover the box and cropped around what
 * draws the eye (sharp's attention strategy). For set variants; a video base passes its
 * poster frame (worker/derivatives/video.ts `extractPoster`).
 */
export async function renderCover(
  input: ImageInput,
  size: { width: number; height: number },
  opts: RenderLimits & { format?: CoverFormat },
): Promise<Buffer> {
  try {
    const pipeline = open(input, opts).resize(size.width, size.height, { fit: "cover", position: "attention" });
    const format = opts.format ?? "webp";
    if (format === "jpeg") return await pipeline.jpeg({ quality: 85, mozjpeg: true }).toBuffer();
    if (format === "png") return await pipeline.png().toBuffer();
    return await pipeline.webp({ quality: 82 }).toBuffer();
  } catch (err) {
    throw decodeError(err, opts);
  }
}

/** sharp's messages are about the file; they become the recorded reason. */
export function decodeError(err: unknown, limits: RenderLimits): Error {
  const message = err instanceof Error ? err.message : String(err);
  if (/pixel limit/i.test(message)) {
    return new MediaError(`The image has more than ${Math.round(limits.maxPixels / 1e6)} megapixels, the limit for thumbnails`);
  }
  return new MediaError(`The image could not be decoded: ${message.split("\n")[0]!.slice(0, 300)}`);
}
