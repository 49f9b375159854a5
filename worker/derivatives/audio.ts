import sharp from "sharp";
import { THUMBNAIL_EDGE } from "../../domain/derivatives/derivatives.ts";
import { audioPeaks, descriptiveTags, type Probe } from "./av.ts";
import { MediaError } from "./errors.ts";
import type { Rendered, Renderer, RenderContext } from "./kinds.ts";
import { renderThumbnail } from "./render.ts";

/** Drawn at twice the thumbnail size, then scaled down: smoother than drawing it small. */
export const WAVEFORM = { width: THUMBNAIL_EDGE * 2, height: THUMBNAIL_EDGE / 2, color: [0x3b, 0x82, 0xf6] as const };

/**
 * The waveform picture: one vertical bar per column, as tall as the loudest sample of its
 * slice of the audio, mirrored around the middle line, on a transparent background.
 */
export function drawWaveform(peaks: Float32Array, size: { width: number; height: number } = WAVEFORM): Promise<Buffer> {
  const { width, height } = size;
  const pixels = Buffer.alloc(width * height * 4);
  const middle = (height - 1) / 2;
  for (let x = 0; x < width; x++) {
    const peak = peaks[Math.floor((x * peaks.length) / width)] ?? 0;
    // Silence still shows as a line, as a recorder's display does.
    const half = Math.max(0.5, peak * middle);
    for (let y = Math.floor(middle - half); y <= Math.ceil(middle + half); y++) {
      if (y < 0 || y >= height) continue;
      const i = (y * width + x) * 4;
      pixels[i] = WAVEFORM.color[0];
      pixels[i + 1] = WAVEFORM.color[1];
      pixels[i + 2] = WAVEFORM.color[2];
      pixels[i + 3] = 255;
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 4 } }).png({ compressionLevel: 1 }).toBuffer();
}

/** Facts about the sound, shared by audio files and videos. */
export function audioFacts(p: Probe): Record<string, unknown> {
  if (!p.audio) return {};
  return {
    audioCodec: p.audio.codec,
    ...(p.audio.sampleRate ? { sampleRate: p.audio.sampleRate } : {}),
    ...(p.audio.channels ? { channels: p.audio.channels } : {}),
  };
}

export async function renderAudio(ctx: RenderContext): Promise<Rendered> {
  const { probe: p, peaks } = await audioPeaks(ctx.file, WAVEFORM.width, ctx.timeoutMs);
  if (!p.audio) throw new MediaError("The file has no audio stream");
  if (peaks.length === 0) throw new MediaError("No waveform could be drawn: the audio stream decodes to nothing");
  return {
    thumbnail: await renderThumbnail(await drawWaveform(peaks), THUMBNAIL_EDGE, ctx.limits),
    info: {
      duration: p.duration,
      ...audioFacts(p),
      ...(p.bitRate ? { bitRate: p.bitRate } : {}),
      ...descriptiveTags(p.tags),
    },
  };
}

export const audioRenderer: Renderer = { render: (ctx) => renderAudio(ctx) };
