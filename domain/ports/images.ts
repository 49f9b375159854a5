/** What a render asks of the image library, format and size already decided. */
export interface ImageTransform {
  width?: number | undefined;
  height?: number | undefined;
  fit: "cover" | "contain" | "inside" | "fill";
  format: "webp" | "avif" | "jpeg" | "png";
  quality: number;
  gravity: string;
  /** The original's EXIF (camera, date, and position unless stripped) travels with the render. */
  metadata: "none" | "exif-without-location" | "exif";
}

export interface TransformedImage {
  bytes: Buffer;
  width: number;
  height: number;
  contentType: string;
}

/** Turns a stored picture into a render: resized, cropped, re-encoded. */
export interface ImageTransformer {
  /** Width and height as displayed, read from the header only (nothing decoded). */
  dimensions(source: Buffer): Promise<{ width: number; height: number } | null>;
  transform(source: Buffer, t: ImageTransform, limits: { maxPixels: number }): Promise<TransformedImage>;
}
