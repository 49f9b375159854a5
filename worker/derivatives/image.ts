import sharp from "sharp";
import { THUMBNAIL_EDGE } from "../../domain/derivatives/derivatives.ts";
import { Unsupported } from "./errors.ts";
import { parseExif } from "./exif.ts";
import type { Renderer } from "./kinds.ts";
import { type ImageInput, renderThumbnail } from "./render.ts";

/**
 * Formats sharp's prebuilt libvips decodes; other image types (RAW, PSD, ICO, and HEIC from
 * phones: its HEVC codec is not in the prebuilt binaries, only AVIF is) get no thumbnail.
 */
export const DECODABLE_IMAGES = new Set([
  "image/jpeg",
  "image/pjpeg",
  "image/png",
  "image/apng",
  "image/webp",
  "image/gif",
  "image/avif",
  "image/tiff",
  "image/svg+xml",
]);

/** Width and height as displayed (after EXIF orientation), format, and basic EXIF. */
export async function describeImage(input: string | Buffer): Promise<Record<string, unknown>> {
  const m = await sharp(input).metadata().catch(() => null);
  if (!m?.width || !m.height) return {};
  // Orientations 5 to 8 turn the picture a quarter: what is stored as width is shown as height.
  const turned = (m.orientation ?? 1) >= 5;
  const exif = parseExif(m.exif);
  return {
    width: turned ? m.height : m.width,
    height: turned ? m.width : m.height,
    format: m.format,
    ...(m.orientation && m.orientation !== 1 ? { orientation: m.orientation } : {}),
    ...(m.hasAlpha ? { hasAlpha: true } : {}),
    ...(m.pages && m.pages > 1 ? { pages: m.pages } : {}),
    ...(Object.keys(exif).length > 0 ? { exif } : {}),
  };
}

export const imageRenderer: Renderer = {
  inMemory: true,
  async render(ctx) {
    const type = ctx.contentType.split(";")[0]!.trim().toLowerCase();
    if (!DECODABLE_IMAGES.has(type)) throw new Unsupported(`No thumbnail is made for ${type} images`);
    const input: string | Buffer = ctx.bytes ?? ctx.file;
    const [info, thumbnail] = await Promise.all([describeImage(input), renderThumbnail(input, THUMBNAIL_EDGE, ctx.limits)]);
    return { thumbnail, info };
  },
};
