import { THUMBNAIL_EDGE } from "../../domain/derivatives/derivatives.ts";
import { audioFacts, renderAudio } from "./audio.ts";
import { descriptiveTags, posterFrame, type Probe, type RawFrame } from "./av.ts";
import { MediaError } from "./errors.ts";
import type { Renderer, RenderContext } from "./kinds.ts";
import { type RawImage, renderThumbnail } from "./render.ts";

/** The largest poster edge; set renditions and renders of a video are cut from it. */
export const POSTER_EDGE = 1280;

/** The poster as sharp input: upright (the display matrix applied) and with square pixels. */
export function uprightPoster(frame: RawFrame, p: Probe): RawImage {
  // The matrix turns the picture counter-clockwise; sharp turns clockwise.
  const turn = p.video?.rotation ? 360 - p.video.rotation : 0;
  return { data: frame.data, width: frame.width, height: frame.height, channels: 3, turn, flop: p.video?.flipped ?? false };
}

/** The picture a video is shown by, at most `edge` on its long side, upright. */
export async function videoPoster(file: string, opts: { edge: number; timeoutMs: number }): Promise<{ probe: Probe; poster: RawImage; at: number }> {
  const { probe, frame } = await posterFrame(file, { maxEdge: opts.edge, timeoutMs: opts.timeoutMs });
  if (!probe.video) throw new MediaError("The file has no video stream");
  if (!frame) throw new MediaError("No frame could be decoded from the video");
  return { probe, poster: uprightPoster(frame, probe), at: frame.at };
}

export const videoRenderer: Renderer = {
  async render(ctx: RenderContext) {
    const { probe: p, frame } = await posterFrame(ctx.file, { maxEdge: THUMBNAIL_EDGE, timeoutMs: ctx.timeoutMs });
    // A "video" with only sound (an .mp4 of a podcast) gets a waveform instead.
    if (!p.video) {
      if (p.audio) return renderAudio(ctx);
      throw new MediaError("The file has no video stream");
    }
    if (!frame) throw new MediaError("No frame could be decoded from the video");
    const turned = p.video.rotation === 90 || p.video.rotation === 270;
    return {
      thumbnail: await renderThumbnail(uprightPoster(frame, p), THUMBNAIL_EDGE, ctx.limits),
      info: {
        width: turned ? p.video.height : p.video.width,
        height: turned ? p.video.width : p.video.height,
        duration: p.duration,
        videoCodec: p.video.codec,
        ...(p.video.frameRate ? { frameRate: p.video.frameRate } : {}),
        ...(p.bitRate ? { bitRate: p.bitRate } : {}),
        ...(p.video.rotation ? { rotation: p.video.rotation } : {}),
        ...audioFacts(p),
        posterAt: frame.at,
        // Cameras and phones write when they started recording.
        ...(p.tags.creation_time && !Number.isNaN(Date.parse(p.tags.creation_time)) ? { takenAt: new Date(p.tags.creation_time).toISOString() } : {}),
        ...descriptiveTags(p.tags),
      },
    };
  },
};
