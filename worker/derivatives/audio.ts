import { stat } from "node:fs/promises";
import { join } from "node:path";
import { THUMBNAIL_EDGE } from "../../domain/derivatives/derivatives.ts";
import { MediaError } from "./errors.ts";
import { runTool } from "./exec.ts";
import type { Rendered, Renderer, RenderContext } from "./kinds.ts";
import { descriptiveTags, type Probe, probe } from "./probe.ts";
import { renderThumbnail } from "./render.ts";

/** Drawn at twice the thumbnail size, then scaled down: smoother than drawing it small. */
const WAVEFORM = { width: THUMBNAIL_EDGE * 2, height: THUMBNAIL_EDGE / 2, color: "0x3b82f6" };

export async function renderAudio(ctx: RenderContext, probed?: Probe): Promise<Rendered> {
  const p = probed ?? (await probe(ctx));
  if (!p.audio) throw new MediaError("The file has no audio stream");
  const out = join(ctx.dir, "waveform.png");
  const filter = `[0:a:0]aformat=channel_layouts=mono,showwavespic=s=${WAVEFORM.width}x${WAVEFORM.height}:colors=${WAVEFORM.color}`;
  await runTool(
    ctx.tools.ffmpeg!,
    ["-hide_banner", "-nostdin", "-v", "error", "-i", ctx.file, "-filter_complex", filter, "-frames:v", "1", "-update", "1", "-y", out],
    { timeoutMs: ctx.timeoutMs, redact: ctx.dir },
  );
  if (!(await stat(out).catch(() => null))?.size) throw new MediaError("No waveform could be drawn: the audio stream decodes to nothing");
  return {
    thumbnail: await renderThumbnail(out, THUMBNAIL_EDGE, ctx.limits),
    info: {
      duration: p.duration,
      audioCodec: p.audio.codec,
      ...(p.audio.sampleRate ? { sampleRate: p.audio.sampleRate } : {}),
      ...(p.audio.channels ? { channels: p.audio.channels } : {}),
      ...(p.bitRate ? { bitRate: p.bitRate } : {}),
      ...descriptiveTags(p.tags),
    },
  };
}

export const audioRenderer: Renderer = { needs: ["ffprobe", "ffmpeg"], render: (ctx) => renderAudio(ctx) };
