import type { MediaKind } from "../../domain/media/kind.ts";
import { audioRenderer } from "./audio.ts";
import { imageRenderer } from "./image.ts";
import type { Renderer } from "./kinds.ts";
import { pdfRenderer } from "./pdf.ts";
import { videoRenderer } from "./video.ts";

/** One renderer per kind; 3d and other files have none (state unsupported). */
export const RENDERERS: Partial<Record<MediaKind, Renderer>> = {
  image: imageRenderer,
  video: videoRenderer,
  audio: audioRenderer,
  pdf: pdfRenderer,
};
