import { Decoder, Demuxer, Scaler } from "node-av/api";
import { AV_DISPOSITION_ATTACHED_PIC, AV_LOG_QUIET, AV_PKT_DATA_DISPLAYMATRIX, AVMEDIA_TYPE_AUDIO, AVMEDIA_TYPE_VIDEO, AVSEEK_FLAG_BACKWARD } from "node-av/constants";
import { avGetCodecName, Codec, CodecContext, Frame, Log, Packet, type Stream } from "node-av/lib";
import { MediaError } from "./errors.ts";

// FFmpeg's own console chatter (decoder warnings about the file) is not ours to print; what
// matters reaches the job as an error.
Log.setLevel(AV_LOG_QUIET);

/**
 * What the worker learns about an audio or video file. Read in-process with node-av, the
 * FFmpeg libraries that come with the npm package: no ffmpeg or ffprobe on the machine.
 */
export interface Probe {
  /** Seconds; null when the container does not say. */
  duration: number | null;
  video: { codec: string | null; width: number; height: number; rotation: number; flipped: boolean; frameRate: number | null; bitRate: number | null } | null;
  audio: { codec: string | null; sampleRate: number | null; channels: number | null; bitRate: number | null } | null;
  /** Bits per second of the whole file. */
  bitRate: number | null;
  tags: Record<string, string>;
}

const positive = (n: number | bigint | null | undefined): number | null => {
  const v = Number(n ?? 0);
  return Number.isFinite(v) && v > 0 ? v : null;
};

/** Opens a file, with every read bounded by `deadline` (a stuck demuxer is interrupted). */
async function open(file: string, timeoutMs: number): Promise<{ input: Demuxer; done: () => void; timedOut: () => boolean }> {
  let input: Demuxer;
  try {
    input = await Demuxer.open(file);
  } catch (err) {
    throw new MediaError(`The file could not be read as audio or video: ${reason(err)}`);
  }
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    input.interrupt();
  }, timeoutMs);
  return { input, done: () => clearTimeout(timer), timedOut: () => expired };
}

/** FFmpeg's messages name the problem with the file ("Invalid data found when processing input"). */
function reason(err: unknown): string {
  const m = err instanceof Error ? err.message : String(err);
  return m.split("\n")[0]!.replace(/^[^:]*failed[^:]*:\s*/i, "").slice(0, 300);
}

/**
 * The clockwise turn, in degrees, that shows the stored picture upright (as players do), and
 * whether it is mirrored: from the stream's display matrix (phones record portrait video as
 * landscape frames with such a matrix).
 */
export function displayTransform(matrix: Buffer | null): { rotation: number; flipped: boolean } {
  if (!matrix || matrix.byteLength < 36) return { rotation: 0, flipped: false };
  const m = new Int32Array(matrix.buffer.slice(matrix.byteOffset, matrix.byteOffset + 36));
  let [a, b, c, d] = [m[0]!, m[1]!, m[3]!, m[4]!];
  const flipped = a * d - b * c < 0;
  if (flipped) [a, c] = [-a, -c];
  // As FFmpeg's av_display_rotation_get: the counter-clockwise angle of the matrix.
  const ccw = -(Math.atan2(b / Math.hypot(b, d), a / Math.hypot(a, c)) * 180) / Math.PI;
  const rotation = ((Math.round(ccw / 90) * 90) % 360 + 360) % 360;
  return { rotation, flipped };
}

function isPicture(s: Stream): boolean {
  return s.codecpar.codecType === AVMEDIA_TYPE_VIDEO && !s.hasDisposition(AV_DISPOSITION_ATTACHED_PIC) && s.codecpar.width > 0 && s.codecpar.height > 0;
}

function describe(input: Demuxer): Probe {
  const v = input.streams.find(isPicture);
  const a = input.streams.find((s) => s.codecpar.codecType === AVMEDIA_TYPE_AUDIO);
  const tags: Record<string, string> = {};
  for (const [k, value] of Object.entries(input.metadata ?? {})) tags[k.toLowerCase()] = String(value).slice(0, 256);
  const streamSeconds = (s: Stream | undefined) => (s && s.duration > 0n ? Number(s.duration) * s.timeBase.toDouble() : null);
  let video: Probe["video"] = null;
  if (v) {
    const fr = v.avgFrameRate;
    const { rotation, flipped } = displayTransform(v.codecpar.getCodedSideData(AV_PKT_DATA_DISPLAYMATRIX));
    // Non-square pixels: the stored width is not the displayed one.
    const sar = v.codecpar.sampleAspectRatio;
    const sarValue = sar.num > 0 && sar.den > 0 ? sar.num / sar.den : 1;
    video = {
      codec: avGetCodecName(v.codecpar.codecId),
      width: Math.round(v.codecpar.width * sarValue),
      height: v.codecpar.height,
      rotation,
      flipped,
      frameRate: fr.num > 0 && fr.den > 0 ? Math.round((fr.num / fr.den) * 1000) / 1000 : null,
      bitRate: positive(v.codecpar.bitRate),
    };
  }
  return {
    duration: positive(input.duration) ?? streamSeconds(v) ?? streamSeconds(a),
    video,
    audio: a
      ? { codec: avGetCodecName(a.codecpar.codecId), sampleRate: positive(a.codecpar.sampleRate), channels: positive(a.codecpar.channels), bitRate: positive(a.codecpar.bitRate) }
      : null,
    // The demuxer reports kilobits per second.
    bitRate: positive(input.bitRate) ? Math.round(input.bitRate * 1000) : null,
    tags,
  };
}

export async function probeFile(file: string, timeoutMs: number): Promise<Probe> {
  const { input, done } = await open(file, timeoutMs);
  try {
    return describe(input);
  } finally {
    done();
    await input.close();
  }
}

/** Title, artist and album when the file names them: handy in lists, and already in the bytes. */
export function descriptiveTags(tags: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ["title", "artist", "album"]) if (tags[k]) out[k] = tags[k]!;
  return out;
}

/** A decoded picture, packed RGB, ready for sharp (`{ raw: { width, height, channels: 3 } }`). */
export interface RawFrame {
  data: Buffer;
  width: number;
  height: number;
  channels: 3;
  /** Seconds into the video. */
  at: number;
}

/** Where posters are looked for: past fade-ins and title cards, spread over the video. */
export const POSTER_CANDIDATES = [0.1, 0.3, 0.5, 0.7, 0.9] as const;

/**
 * How much a frame shows: the spread of its brightness, zero for a flat (black, white, one
 * colour) frame. Measured on a sparse grid of pixels: it only has to rank a few frames.
 */
export function frameInterest(frame: { data: Buffer; width: number; height: number }): number {
  const step = Math.max(1, Math.floor(Math.sqrt((frame.width * frame.height) / 4096)));
  let n = 0;
  let sum = 0;
  let sq = 0;
  for (let y = 0; y < frame.height; y += step) {
    for (let x = 0; x < frame.width; x += step) {
      const i = (y * frame.width + x) * 3;
      const l = 0.299 * frame.data[i]! + 0.587 * frame.data[i + 1]! + 0.114 * frame.data[i + 2]!;
      sum += l;
      sq += l * l;
      n++;
    }
  }
  if (n === 0) return 0;
  const mean = sum / n;
  const spread = Math.sqrt(Math.max(0, sq / n - mean * mean));
  // A nearly black or white frame with a little noise is still not a picture of anything.
  return mean < 16 || mean > 240 ? spread / 4 : spread;
}

/** A frame whose brightness spreads this much shows something: stop looking further. */
const GOOD_ENOUGH = 24;

/**
 * The video's poster: the keyframe at or before 10% of the duration, unless that frame is
 * flat (a black fade-in, a white title card); then the most varied of the keyframes at 30,
 * 50, 70 and 90%. Scaled so its long edge is at most `maxEdge`, with square pixels. Keyframes
 * only: no decoding up to an exact time, so it costs the same at any position.
 * Rotation is left to the caller (`Probe.video.rotation`).
 */
export async function posterFrame(file: string, opts: { maxEdge: number; timeoutMs: number }): Promise<{ probe: Probe; frame: RawFrame | null }> {
  const { input, done, timedOut } = await open(file, opts.timeoutMs);
  try {
    const probe = describe(input);
    const stream = input.streams.find(isPicture);
    if (!stream || !probe.video) return { probe, frame: null };
    const scale = Math.min(1, opts.maxEdge / Math.max(probe.video.width, probe.video.height));
    const size = { width: Math.max(2, Math.round(probe.video.width * scale)), height: Math.max(2, Math.round(probe.video.height * scale)) };
    using scaler = new Scaler();
    const times = probe.duration ? POSTER_CANDIDATES.map((f) => Math.round(probe.duration! * f * 1000) / 1000) : [0];
    let best: { frame: RawFrame; score: number } | null = null;
    for (const at of [...times, 0]) {
      const frame = await frameAt(input, stream, scaler, at, size);
      if (timedOut()) throw new MediaError(`Reading the video took longer than ${Math.round(opts.timeoutMs / 1000)} s and was stopped`);
      if (!frame) continue;
      const score = frameInterest(frame);
      if (!best || score > best.score) best = { frame, score };
      if (score >= GOOD_ENOUGH) break;
    }
    return { probe, frame: best?.frame ?? null };
  } finally {
    done();
    await input.close();
  }
}

/** The first frame decoded from the keyframe at or before `at` seconds; null when none decodes. */
async function frameAt(input: Demuxer, stream: Stream, scaler: Scaler, at: number, size: { width: number; height: number }): Promise<RawFrame | null> {
  if ((await input.seek(at, -1, AVSEEK_FLAG_BACKWARD)) < 0 && at > 0) return null;
  // Packets are read directly (not through the demuxer's read-ahead thread, which does not
  // follow seeks), and each position gets a fresh decoder: nothing buffered leaks across.
  const format = input.getFormatContext();
  using decoder = await Decoder.create(stream);
  using packet = new Packet();
  packet.alloc();
  let read = 0;
  try {
    for (; read < MAX_PACKETS_PER_FRAME; read++) {
      const ended = (await format.readFrame(packet)) < 0;
      if (!ended && packet.streamIndex !== stream.index) {
        packet.unref();
        continue;
      }
      const frames = await decoder.decodeAll(ended ? null : packet);
      packet.unref();
      const frame = frames[0];
      if (frame) {
        const data = await scaler.toBuffer(frame, { resize: size, format: "rgb" });
        const pts = frame.bestEffortTimestamp;
        const seconds = pts >= 0n ? Math.round(Number(pts) * stream.timeBase.toDouble() * 1000) / 1000 : at;
        for (const f of frames) f.free();
        return { data, ...size, channels: 3, at: seconds };
      }
      if (ended) return null;
    }
  } catch (err) {
    if (read === 0) throw new MediaError(`No frame could be decoded from the video: ${reason(err)}`);
  }
  return null;
}

/** A generous bound on packets read looking for one decodable frame (a broken stream ends the search). */
const MAX_PACKETS_PER_FRAME = 600;

/** How long decoding holds the thread before letting other work (requests, other jobs) run. */
const SLICE_MS = 15;
const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Absolute sample values of one channel plane (or of an interleaved buffer), as read from
 * FFmpeg's sample formats, scaled to 0..1. Unknown formats read as silence.
 */
function sampleReader(format: number, plane: Buffer, count: number): { length: number; at: (i: number) => number } {
  const view = (Ctor: Float32ArrayConstructor | Float64ArrayConstructor | Int16ArrayConstructor | Int32ArrayConstructor, scale: number) => {
    const a = new Ctor(plane.buffer as ArrayBuffer, plane.byteOffset, Math.min(count, Math.floor(plane.byteLength / Ctor.BYTES_PER_ELEMENT)));
    return { length: a.length, at: (i: number) => Math.abs(a[i]!) * scale };
  };
  switch (format) {
    case 0: // u8
    case 5:
      return { length: Math.min(count, plane.byteLength), at: (i) => Math.abs(plane[i]! - 128) / 128 };
    case 1: // s16
    case 6:
      return view(Int16Array, 1 / 32768);
    case 2: // s32
    case 7:
      return view(Int32Array, 1 / 2147483648);
    case 3: // float
    case 8:
      return view(Float32Array, 1);
    case 4: // double
    case 9:
      return view(Float64Array, 1);
  }
  return { length: 0, at: () => 0 };
}

/** Planar sample formats (one plane per channel): u8p, s16p, s32p, fltp, dblp, s64p. */
const PLANAR = new Set([5, 6, 7, 8, 9, 11]);

/**
 * The loudness envelope of the first audio stream: for each of `columns` equal slices of the
 * audio, the largest absolute sample of any channel (0..1). Decodes the whole stream with
 * FFmpeg's decoder called directly, in slices of a few milliseconds between which other work
 * runs: per-frame asynchronous calls cost more than decoding (measured: 1.1 s against 0.25 s
 * for three minutes of MP3).
 */
export async function audioPeaks(file: string, columns: number, timeoutMs: number): Promise<{ probe: Probe; peaks: Float32Array }> {
  const { input, done, timedOut } = await open(file, timeoutMs);
  try {
    const probe = describe(input);
    const stream = input.streams.find((s) => s.codecpar.codecType === AVMEDIA_TYPE_AUDIO);
    if (!stream || !probe.audio) return { probe, peaks: new Float32Array(0) };
    const codec = Codec.findDecoder(stream.codecpar.codecId);
    if (!codec) throw new MediaError(`The audio codec (${probe.audio.codec ?? "unknown"}) cannot be decoded here`);
    using decoder = new CodecContext();
    decoder.allocContext3(codec);
    decoder.parametersToContext(stream.codecpar);
    if (decoder.open2Sync(codec, null) < 0) throw new MediaError("The audio stream could not be opened for decoding");
    using packet = new Packet();
    packet.alloc();
    using frame = new Frame();
    frame.alloc();
    const format = input.getFormatContext();
    const rate = probe.audio.sampleRate ?? 44100;
    // Unknown duration: gather at a fixed slice length and fold to `columns` at the end.
    const expected = probe.duration ? Math.ceil(probe.duration * rate) : null;
    const perColumn = expected ? Math.max(1, expected / columns) : rate / 50;
    const slices: number[] = [];
    let position = 0;
    let sliceStart = performance.now();
    const take = () => {
      const nb = frame.nbSamples;
      const planes = frame.data ?? [];
      const planar = PLANAR.has(frame.format as number);
      const channels = Math.max(1, frame.channels);
      const readers = planar ? planes.slice(0, channels).map((p) => sampleReader(frame.format as number, p, nb)) : planes[0] ? [sampleReader(frame.format as number, planes[0], nb * channels)] : [];
      const step = planar ? 1 : channels;
      for (const r of readers) {
        // Slot boundaries advance incrementally: no division per sample.
        let slot = Math.floor(position / perColumn);
        let next = (slot + 1) * perColumn;
        let peak = slices[slot] ?? 0;
        for (let i = 0, n = position; i < r.length; i += step, n++) {
          if (n >= next) {
            slices[slot] = peak;
            slot = Math.floor(n / perColumn);
            next = (slot + 1) * perColumn;
            peak = slices[slot] ?? 0;
          }
          for (let c = 0; c < step; c++) {
            const v = r.at(i + c);
            if (v > peak) peak = v;
          }
        }
        slices[slot] = Math.min(1, peak);
      }
      position += nb;
    };
    const drain = () => {
      while (decoder.receiveFrameSync(frame) >= 0) {
        take();
        frame.unref();
      }
    };
    for (;;) {
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldToOthers();
        if (timedOut()) throw new MediaError(`Reading the audio took longer than ${Math.round(timeoutMs / 1000)} s and was stopped`);
        sliceStart = performance.now();
      }
      if (format.readFrameSync(packet) < 0) break;
      if (packet.streamIndex === stream.index) {
        // A damaged packet is skipped, as players do; a file of nothing but damage draws nothing.
        if (decoder.sendPacketSync(packet) >= 0) drain();
      }
      packet.unref();
    }
    decoder.sendPacketSync(null);
    drain();
    if (position === 0) return { probe, peaks: new Float32Array(0) };
    return { probe, peaks: fold(slices, columns) };
  } catch (err) {
    if (err instanceof MediaError) throw err;
    throw new MediaError(`The audio could not be decoded: ${reason(err)}`);
  } finally {
    done();
    await input.close();
  }
}

/** Resamples a list of peaks to exactly `columns` (the largest peak of each group wins). */
function fold(slices: number[], columns: number): Float32Array {
  const out = new Float32Array(columns);
  const n = slices.length;
  for (let c = 0; c < columns; c++) {
    const from = Math.floor((c * n) / columns);
    const to = Math.max(from + 1, Math.floor(((c + 1) * n) / columns));
    let peak = 0;
    for (let i = from; i < to && i < n; i++) peak = Math.max(peak, slices[i] ?? 0);
    out[c] = peak;
  }
  return out;
}
