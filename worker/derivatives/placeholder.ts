import sharp from "sharp";
import { rgbaToThumbHash } from "thumbhash";

/**
 * What an interface paints before the thumbnail arrives: a ThumbHash (a blurred picture in
 * about 25 bytes, base64) and the dominant colour (`#rrggbb`). Made from the thumbnail, so it
 * exists for every kind that has one: photos, posters, pages, waveforms.
 */
export interface Placeholder {
  thumbhash: string;
  color: string;
}

/** ThumbHash takes at most 100 x 100 pixels. */
const EDGE = 100;

export async function placeholderOf(thumbnail: Buffer): Promise<Placeholder> {
  const { data, info } = await sharp(thumbnail).resize(EDGE, EDGE, { fit: "inside" }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { thumbhash: Buffer.from(rgbaToThumbHash(info.width, info.height, data)).toString("base64"), color: dominantColor(data) };
}

/**
 * The most common colour, counted in 4096 bins (4 bits a channel) and averaged within the
 * winning bin; transparent pixels do not count. Black when nothing is opaque.
 */
export function dominantColor(rgba: Uint8Array): string {
  const count = new Uint32Array(4096);
  const sums = new Float64Array(4096 * 3);
  for (let i = 0; i + 3 < rgba.length; i += 4) {
    if (rgba[i + 3]! < 128) continue;
    const bin = ((rgba[i]! >> 4) << 8) | ((rgba[i + 1]! >> 4) << 4) | (rgba[i + 2]! >> 4);
    count[bin]!++;
    sums[bin * 3]! += rgba[i]!;
    sums[bin * 3 + 1]! += rgba[i + 1]!;
    sums[bin * 3 + 2]! += rgba[i + 2]!;
  }
  let best = -1;
  for (let b = 0; b < 4096; b++) if (count[b]! > 0 && (best < 0 || count[b]! > count[best]!)) best = b;
  if (best < 0) return "#000000";
  const hex = (c: number) => Math.round(sums[best * 3 + c]! / count[best]!).toString(16).padStart(2, "0");
  return `#${hex(0)}${hex(1)}${hex(2)}`;
}
