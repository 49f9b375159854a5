import sharp from "sharp";
import type { ImageTransform, ImageTransformer, TransformedImage } from "../../domain/ports/images.ts";
import { join } from "node:path";
import type { WorkerConfig } from "../../domain/core/config.ts";
import type { ObjectStorage } from "../../domain/ports/storage.ts";
import { MediaError } from "./errors.ts";
import { parseExif } from "./exif.ts";
import { MAX_PDF_BYTES, readPdf } from "./pdf.ts";
import { decodeError, renderSource } from "./render.ts";
import { downloadTo, readSmall, withTempDir } from "./source.ts";
import { videoPoster } from "./video.ts";

const GRAVITY: Record<string, string | number> = {
  center: "centre",
  north: "north",
  northeast: "northeast",
  east: "east",
  southeast: "southeast",
  south: "south",
  southwest: "southwest",
  west: "west",
  northwest: "northwest",
  attention: sharp.strategy.attention,
  entropy: sharp.strategy.entropy,
};

const CONTENT_TYPES = { webp: "image/webp", avif: "image/avif", jpeg: "image/jpeg", png: "image/png" } as const;

/** The camera facts of an EXIF block, written back without the GPS position. */
function exifWithoutLocation(block: Buffer | undefined): Record<string, Record<string, string>> | null {
  const e = parseExif(block);
  const ifd0: Record<string, string> = {};
  const ifd2: Record<string, string> = {};
  if (e.make) ifd0.Make = e.make;
  if (e.model) ifd0.Model = e.model;
  if (e.software) ifd0.Software = e.software;
  if (e.takenAt) ifd2.DateTimeOriginal = e.takenAt.slice(0, 19).replace(/^(\d{4})-(\d{2})-(\d{2})T/, "$1:$2:$3 ");
  if (e.lensMake) ifd2.LensMake = e.lensMake;
  if (e.lensModel) ifd2.LensModel = e.lensModel;
  if (e.iso) ifd2.ISOSpeedRatings = String(e.iso);
  if (!Object.keys(ifd0).length && !Object.keys(ifd2).length) return null;
  return { IFD0: ifd0, IFD2: ifd2 };
}

/**
 * Renders with sharp (libvips), the library the thumbnails come from; posters and pages as the
 * worker makes them. With a `renderer` (WORKER_NICE > 0), the resizing and encoding happen in
 * its lower-priority child process instead of this one.
 */
export function mediaImages(storage: ObjectStorage, worker: Pick<WorkerConfig, "maxInputBytes" | "maxPixels" | "toolTimeoutMs">, renderer: Pick<ImageTransformer, "transform"> | null = null): ImageTransformer {
  return {
    ...sharpTransformer,
    ...(renderer ? { transform: (source: Buffer, t: ImageTransform, limits: { maxPixels: number }) => renderer.transform(source, t, limits) } : {}),
    async sourcePicture(source, edge) {
      if (source.size > worker.maxInputBytes) throw new MediaError("The file is too large to render pictures from");
      const limits = { maxPixels: worker.maxPixels };
      const expect = { etag: source.etag, maxBytes: worker.maxInputBytes };
      if (source.kind === "pdf") {
        if (source.size > MAX_PDF_BYTES) throw new MediaError("PDFs larger than 256 MiB are not rendered");
        const { bytes } = await readSmall(storage, source.storageKey, expect);
        const { page } = await readPdf(bytes, { edge, timeoutMs: worker.toolTimeoutMs });
        if (!page) throw new MediaError("The first page could not be rendered");
        return renderSource(page, limits, "png");
      }
      return withTempDir(async (dir) => {
        const file = join(dir, "source");
        await downloadTo(storage, source.storageKey, file, expect);
        const { poster } = await videoPoster(file, { edge, timeoutMs: worker.toolTimeoutMs });
        return renderSource(poster, limits, "jpeg");
      });
    },
  };
}

/** Resizing and re-encoding only (no stored videos or PDFs to read). */
export const sharpTransformer: Omit<ImageTransformer, "sourcePicture"> = {
  async dimensions(source) {
    const m = await sharp(source).metadata().catch(() => null);
    if (!m?.width || !m.height) return null;
    return (m.orientation ?? 1) >= 5 ? { width: m.height, height: m.width } : { width: m.width, height: m.height };
  },

  async transform(source: Buffer, t: ImageTransform, limits: { maxPixels: number }): Promise<TransformedImage> {
    try {
      let pipeline = sharp(source, { limitInputPixels: limits.maxPixels, failOn: "warning" }).rotate();
      if (t.width || t.height) {
        pipeline = pipeline.resize(t.width ?? null, t.height ?? null, {
          fit: t.fit,
          position: GRAVITY[t.gravity] ?? "centre",
          // Letterboxing for contain: transparent where the format has alpha, white elsewhere.
          background: t.format === "jpeg" ? "#ffffff" : { r: 0, g: 0, b: 0, alpha: 0 },
          withoutEnlargement: t.fit === "inside",
        });
      }
      if (t.format === "jpeg") pipeline = pipeline.flatten({ background: "#ffffff" });
      if (t.metadata === "exif") pipeline = pipeline.keepExif();
      else if (t.metadata === "exif-without-location") {
        const exif = exifWithoutLocation((await sharp(source).metadata()).exif);
        if (exif) pipeline = pipeline.withExif(exif);
      }
      const encoded =
        t.format === "webp"
          ? pipeline.webp({ quality: t.quality })
          : t.format === "avif"
            ? pipeline.avif({ quality: t.quality, effort: 2 })
            : t.format === "jpeg"
              ? pipeline.jpeg({ quality: t.quality, mozjpeg: false })
              : pipeline.png({ compressionLevel: 6 });
      const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
      return { bytes: data, width: info.width, height: info.height, contentType: CONTENT_TYPES[t.format] };
    } catch (err) {
      throw decodeError(err, limits);
    }
  },
};
