import { type Lab, labOf } from "./colors.ts";
import type { MediaKind } from "./kind.ts";

/*
 * What object_facts keeps about an object's picture (its thumbnail): the 64-bit difference hash
 * in its four indexed 16-bit segments (domain/media/similar.ts) and the dominant colour in
 * CIELAB (domain/media/colors.ts).
 */

/** Kinds whose thumbnail is a picture of the file (an audio file's is a waveform). */
export const hasPicture = (kind: MediaKind) => kind === "image" || kind === "video" || kind === "pdf";

/**
 * The columns of object_facts about the picture: its hash and the CIELAB of its dominant
 * colour, from what the worker put in `info`; nulls for other kinds.
 */
export function pictureFacts(kind: MediaKind, info: Record<string, unknown>): { phash: string | null; segments: (number | null)[]; lab: Lab | null } {
  const h = hasPicture(kind) ? hashColumns(typeof info.phash === "string" ? info.phash : null) : null;
  const color = (info.placeholder as { color?: unknown } | undefined)?.color;
  return {
    phash: h ? h.phash.toString() : null,
    segments: h ? h.segments : [null, null, null, null],
    lab: hasPicture(kind) && typeof color === "string" ? labOf(color) : null,
  };
}

/** What object_facts stores of a hash: the signed 64-bit number and its four 16-bit segments. */
export function hashColumns(hex: string | null | undefined): { phash: bigint; segments: [number, number, number, number] } | null {
  if (!hex || !/^[0-9a-f]{16}$/.test(hex)) return null;
  const u = BigInt(`0x${hex}`);
  const seg = (i: number) => Number((u >> BigInt(48 - 16 * i)) & 0xffffn);
  return { phash: BigInt.asIntN(64, u), segments: [seg(0), seg(1), seg(2), seg(3)] };
}

/** Every 16-bit value within `radius` bits of `value`. */
export function segmentNeighbours(value: number, radius: number): number[] {
  const out = [value];
  const flip = (from: number, start: number, left: number) => {
    for (let bit = start; bit < 16; bit++) {
      const v = from ^ (1 << bit);
      out.push(v);
      if (left > 1) flip(v, bit + 1, left - 1);
    }
  };
  if (radius > 0) flip(value, 0, radius);
  return out;
}

