import sharp from "sharp";
import { placeholderOf } from "./placeholder.ts";

/**
 * A 64-bit difference hash (dHash) of a picture, as 16 hex digits: the picture in grey at
 * 9 x 8 pixels, one bit per pair of horizontal neighbours (1 when the left one is brighter).
 * Resizing, recompression and small colour shifts move few bits, so near-identical pictures
 * are a few bits apart (Hamming distance); unrelated ones about 32. Made from the thumbnail,
 * which every image, video poster and PDF first page has, so no file is decoded twice.
 * Transparent areas count as white, as a viewer shows them on a page.
 */
export async function phashOf(picture: Uint8Array): Promise<string> {
  const { data } = await sharp(picture)
    .flatten({ background: "#ffffff" })
    .greyscale()
    .resize(9, 8, { fit: "fill", kernel: "cubic" })
    .raw()
    .toBuffer({ resolveWithObject: true });
  let hash = 0n;
  for (let y = 0; y < 8; y++) {
    for (let x = 0; x < 8; x++) hash = (hash << 1n) | (data[y * 9 + x]! > data[y * 9 + x + 1]! ? 1n : 0n);
  }
  return hash.toString(16).padStart(16, "0");
}

/** What a backfill reads from a stored thumbnail: its hash and dominant colour (domain/media/picture-backfill.ts). */
export async function readPicture(thumbnail: Uint8Array): Promise<{ phash: string; color: string }> {
  const [phash, placeholder] = await Promise.all([phashOf(thumbnail), placeholderOf(Buffer.from(thumbnail))]);
  return { phash, color: placeholder.color };
}
