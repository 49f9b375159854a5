import type { RenderedImage, RenderLimits } from "./render.ts";

/** What rendering one object yields: its thumbnail and the facts found on the way (for `info`). */
export interface Rendered {
  thumbnail: RenderedImage;
  info: Record<string, unknown>;
  /** The source's SHA-256, when the render read the source itself (`RenderContext.stored`). */
  sha256?: string;
}


/** Everything a renderer may use: the object's bytes in a file or in memory, a scratch directory, the limits. */
export interface RenderContext {
  /** The object's bytes on disk; empty when they were handed over in memory (`bytes`). */
  file: string;
  /** Small objects for renderers that take them in memory: no temporary file is written. */
  bytes?: Buffer;
  /**
   * Instead of `bytes`: the store's own file of the version (ObjectStorage.localFile) and its
   * size, read whole and hashed where the render runs (the picture process), so the bytes are
   * not sent to it.
   */
  stored?: { path: string; size: number };
  /** Private to this job and removed afterwards. */
  dir: string;
  contentType: string;
  limits: RenderLimits;
  /** How long decoding one file may take before it is stopped. */
  timeoutMs: number;
}

export interface Renderer {
  /** Takes small objects as bytes in memory (sharp and pdf.js do; the FFmpeg demuxer wants a file). */
  inMemory?: boolean;
  render(ctx: RenderContext): Promise<Rendered>;
}
