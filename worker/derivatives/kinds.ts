import type { RenderedImage, RenderLimits } from "./render.ts";

/** What rendering one object yields: its thumbnail and the facts found on the way (for `info`). */
export interface Rendered {
  thumbnail: RenderedImage;
  info: Record<string, unknown>;
}

/** Everything a renderer may use: the object's bytes in a file, a scratch directory, the limits. */
export interface RenderContext {
  /** The object's bytes on disk; empty when they were handed over in memory (`bytes`). */
  file: string;
  /** Small objects for renderers that take them in memory: no temporary file is written. */
  bytes?: Buffer;
  /** Private to this job and removed afterwards; also what error messages must not show. */
  dir: string;
  contentType: string;
  limits: RenderLimits;
  timeoutMs: number;
  /** Resolved paths of the external tools the renderer declared it needs. */
  tools: Record<string, string>;
}

export interface Renderer {
  /** External tools (ffmpeg, poppler) it runs; without them its kind is unsupported. */
  needs: readonly string[];
  /** Takes small objects as bytes in memory (sharp does; external tools need a file). */
  inMemory?: boolean;
  render(ctx: RenderContext): Promise<Rendered>;
}
