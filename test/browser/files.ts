import sharp, { type SharpOptions } from "sharp";

/** A PNG of the given size and colour, for uploads that should get a thumbnail. */
export async function png(width: number, height: number, colour: { r: number; g: number; b: number }): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: colour } }).png().toBuffer();
}

/**
 * A PNG of noise, stored uncompressed so its size is about width × height × 3 bytes: large
 * enough to go up in parts, and still a picture the worker can thumbnail.
 */
export async function bigPng(width: number, height: number): Promise<Buffer> {
  const create = { width, height, channels: 3 as const, noise: { type: "gaussian" as const, mean: 128, sigma: 60 } };
  return sharp({ create } as SharpOptions)
    .png({ compressionLevel: 0 })
    .toBuffer();
}
