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

/** A stored video or PDF, as the picture it is rendered from is made of it. */
export interface PictureSource {
  kind: "video" | "pdf";
  /** Where its bytes are, and the version they must be. */
  storageKey: string;
  etag: string | null;
  size: number;
}

/** Turns a stored picture into a render: resized, cropped, re-encoded. */
export interface ImageTransformer {
  /**
   * The picture a video (its poster frame) or a PDF (its first page) is rendered from, long
   * edge at most `edge`: JPEG for frames, PNG for pages. Throws an Error whose message is fit
   * for the user when the file cannot be read.
   */
  sourcePicture(source: PictureSource, edge: number): Promise<TransformedImage>;
  /** Width and height as displayed, read from the header only (nothing decoded). */
  dimensions(source: Buffer): Promise<{ width: number; height: number } | null>;
  transform(source: Buffer, t: ImageTransform, limits: { maxPixels: number }): Promise<TransformedImage>;
}
