import { stat } from "node:fs/promises";
import { join } from "node:path";
import { THUMBNAIL_EDGE } from "../../domain/derivatives/derivatives.ts";
import { renderAudio } from "./audio.ts";
import { MediaError } from "./errors.ts";
import { runTool } from "./exec.ts";
import type { Renderer, RenderContext } from "./kinds.ts";
import { descriptiveTags, probe } from "./probe.ts";
import { renderThumbnail } from "./render.ts";

/** The poster is taken near 10% into the video: past fade-ins and black title frames. */
export function posterTime(duration: number | null): number {
  return duration && duration > 0 ? Math.round(duration * 100) / 1000 : 0;
}

/** The largest poster edge; set renditions of a video base are cut from it. */
export const POSTER_EDGE = 1280;

/**
 * Writes one frame as PNG: the keyframe at or before `at` (no decoding up to the exact time,
 * so it costs the same at any position), in display orientation and aspect, long edge at
 * most `maxEdge`. False when the video has no frame there.
 */
export async function extractPoster(
  ffmpeg: string,
  file: string,
  out: string,
  at: number,
  opts: { timeoutMs: number; redact?: string; maxEdge?: number },
): Promise<boolean> {
  const edge = opts.maxEdge ?? POSTER_EDGE;
  // Non-square pixels are made square first, then the frame is fitted in the box.
  const vf = `scale='if(gt(sar,0),iw*sar,iw)':ih,setsar=1,scale='min(${edge},iw)':'min(${edge},ih)':force_original_aspect_ratio=decrease`;
  await runTool(
    ffmpeg,
    ["-hide_banner", "-nostdin", "-v", "error", "-ss", String(at), "-noaccurate_seek", "-i", file, "-map", "0:v:0", "-frames:v", "1", "-vf", vf, "-update", "1", "-compression_level", "1", "-y", out],
    { timeoutMs: opts.timeoutMs, redact: opts.redact },
  );
  return (await stat(out).catch(() => null))?.size ? true : false;
}

export const videoRenderer: Renderer = {
  needs: ["ffprobe", "ffmpeg"],
  async render(ctx: RenderContext) {
    const p = await probe(ctx);
    // A "video" with only sound (an .mp4 of a podcast) gets a waveform instead.
    if (!p.video) {
      if (p.audio) return renderAudio(ctx, p);
      throw new MediaError("The file has no video stream");
    }
    const poster = join(ctx.dir, "poster.png");
    const at = posterTime(p.duration);
    const opts = { timeoutMs: ctx.timeoutMs, redact: ctx.dir };
    const found = (await extractPoster(ctx.tools.ffmpeg!, ctx.file, poster, at, opts)) || (at > 0 && (await extractPoster(ctx.tools.ffmpeg!, ctx.file, poster, 0, opts)));
    if (!found) throw new MediaError("No frame could be decoded from the video");
    const turned = p.video.rotation === 90 || p.video.rotation === 270;
    return {
      thumbnail: await renderThumbnail(poster, THUMBNAIL_EDGE, ctx.limits),
      info: {
        width: turned ? p.video.height : p.video.width,
        height: turned ? p.video.width : p.video.height,
        duration: p.duration,
        videoCodec: p.video.codec,
        ...(p.video.frameRate ? { frameRate: p.video.frameRate } : {}),
        ...(p.audio ? { audioCodec: p.audio.codec } : {}),
        ...(p.video.rotation ? { rotation: p.video.rotation } : {}),
        posterAt: at,
        ...descriptiveTags(p.tags),
      },
    };
  },
};
