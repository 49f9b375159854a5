import { runTool } from "./exec.ts";
import type { RenderContext } from "./kinds.ts";

export interface Probe {
  /** Seconds; null when the container does not say. */
  duration: number | null;
  video: { codec: string | null; width: number; height: number; rotation: number; frameRate: number | null } | null;
  audio: { codec: string | null; sampleRate: number | null; channels: number | null } | null;
  bitRate: number | null;
  tags: Record<string, string>;
}

interface RawStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  duration?: string;
  avg_frame_rate?: string;
  sample_rate?: string;
  channels?: number;
  disposition?: { attached_pic?: number };
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number }[];
}

const num = (v: unknown): number | null => {
  const n = typeof v === "number" ? v : Number.parseFloat(String(v ?? ""));
  return Number.isFinite(n) ? n : null;
};

/** `ffprobe -print_format json -show_format -show_streams` output, reduced to what we use. */
export function parseProbe(json: unknown): Probe {
  const root = (json ?? {}) as { streams?: RawStream[]; format?: { duration?: string; bit_rate?: string; tags?: Record<string, string> } };
  const streams = root.streams ?? [];
  // Cover art in an audio file shows up as a one-frame video stream; it is not a video.
  const v = streams.find((s) => s.codec_type === "video" && !s.disposition?.attached_pic && s.width && s.height);
  const a = streams.find((s) => s.codec_type === "audio");
  const rotation = v ? (num(v.side_data_list?.find((d) => d.rotation !== undefined)?.rotation) ?? num(v.tags?.rotate) ?? 0) : 0;
  const [fn, fd] = (v?.avg_frame_rate ?? "").split("/").map(Number);
  const tags: Record<string, string> = {};
  for (const [k, value] of Object.entries(root.format?.tags ?? {})) tags[k.toLowerCase()] = String(value).slice(0, 256);
  return {
    duration: num(root.format?.duration) ?? num(v?.duration) ?? num(a?.duration),
    video: v
      ? {
          codec: v.codec_name ?? null,
          width: v.width!,
          height: v.height!,
          rotation: ((Math.round(rotation) % 360) + 360) % 360,
          frameRate: fn && fd ? Math.round((fn / fd) * 1000) / 1000 : null,
        }
      : null,
    audio: a ? { codec: a.codec_name ?? null, sampleRate: num(a.sample_rate), channels: a.channels ?? null } : null,
    bitRate: num(root.format?.bit_rate),
    tags,
  };
}

export async function probe(ctx: RenderContext): Promise<Probe> {
  const out = await runTool(ctx.tools.ffprobe!, ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", ctx.file], {
    timeoutMs: ctx.timeoutMs,
    redact: ctx.dir,
  });
  return parseProbe(JSON.parse(out.toString("utf8")));
}

/** Title, artist and album when the file names them: handy in lists, and already in the bytes. */
export function descriptiveTags(tags: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ["title", "artist", "album"]) if (tags[k]) out[k] = tags[k]!;
  return out;
}
