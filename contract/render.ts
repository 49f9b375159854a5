import { z } from "zod";
import { id, timestamp } from "./common.ts";

/** How a render fits the box: as CSS object-fit, and as sharp and image CDNs name them. */
export const RENDER_FITS = ["cover", "contain", "inside", "fill"] as const;
/** `auto`: WebP when the client's Accept names it, else JPEG (AVIF only when asked for: it encodes several times slower). */
export const RENDER_FORMATS = ["auto", "webp", "avif", "jpeg", "png"] as const;
/** Where a `cover` crop keeps the picture: a side or corner, the centre, or what draws the eye (`attention`) or holds most detail (`entropy`). */
export const RENDER_GRAVITIES = ["center", "north", "northeast", "east", "southeast", "south", "southwest", "west", "northwest", "attention", "entropy"] as const;

/** The transformation of a render, as a URL's query carries it. */
export const renderParams = z.object({
  width: z.coerce.number().int().min(1).max(8192).optional().describe("Pixels, aspect kept"),
  height: z.coerce.number().int().min(1).max(8192).optional().describe("Pixels, aspect kept"),
  fit: z.enum(RENDER_FITS).default("inside").describe("cover: crop to fill; contain: letterbox; inside: fit, never enlarge; fill: stretch"),
  format: z.enum(RENDER_FORMATS).default("auto").describe("auto: WebP, or JPEG if Accept lacks it"),
  quality: z.coerce.number().int().min(1).max(100).default(80).describe("Encoder quality"),
  gravity: z.enum(RENDER_GRAVITIES).default("center").describe("What a cover crop keeps"),
});
export type RenderParams = z.output<typeof renderParams>;

export const renderedImage = z
  .object({
    objectId: id("Media object"),
    bucketId: id("Bucket"),
    contentType: z.string().describe("image/webp, image/avif, image/jpeg or image/png"),
    width: z.number().int(),
    height: z.number().int(),
    size: z.number().int().describe("Bytes"),
    etag: z.string().describe("Names this render of this version of the object: the same request gives the same etag"),
    cached: z.boolean().describe("Served from the render cache rather than made now"),
  })
  .meta({ id: "RenderedImage" });

export const signedRenderUrl = z
  .object({
    url: z.string().describe("GET it without a credential (an <img> src): the render, until it expires"),
    expiresAt: timestamp("When the URL stops working"),
    expiresIn: z.number().int().describe("Seconds"),
  })
  .meta({ id: "SignedRenderUrl" });

export const mediaSettings = z
  .object({
    stripLocation: z.boolean().describe("Renders of photos never carry their GPS position (default true); false keeps the original's EXIF, position included"),
    ocrOnUpload: z.boolean().describe("OCR of uploaded images into search (default false: it costs CPU)"),
    ocrLanguages: z.array(z.string()).describe("OCR languages"),
    ocrLanguagesInstalled: z.array(z.string()).describe("Languages with an OCR model installed"),
  })
  .meta({ id: "MediaSettings" });
export type MediaSettings = z.output<typeof mediaSettings>;
