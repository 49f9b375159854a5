import { describe, expect, test } from "bun:test";
import sharp from "sharp";
import { parseExif as sut } from "../../worker/derivatives/exif.ts";
import { orientedJpeg } from "../support/media-files.ts";

/** A big-endian TIFF block with IFD0 = { Make: "BE" } and nothing else. */
function bigEndianBlock(): Uint8Array {
  const b = new Uint8Array(8 + 2 + 12 + 4 + 4);
  const v = new DataView(b.buffer);
  b.set([0x4d, 0x4d]); // "MM"
  v.setUint16(2, 42);
  v.setUint32(4, 8);
  v.setUint16(8, 1);
  v.setUint16(10, 0x010f); // Make
  v.setUint16(12, 2); // ASCII
  v.setUint32(14, 3); // "BE\0" fits inline
  b.set([0x42, 0x45, 0], 18);
  return b;
}

describe("parseExif", () => {
  test("reads camera, exposure and time from what sharp wrote", async () => {
    const { exif } = await sharp(await orientedJpeg(40, 20)).metadata();
    expect(sut(exif)).toEqual({ make: "TestCam", model: "T-1000", exposureTime: 0.004, fNumber: 2.8, iso: 200, takenAt: "2024-05-01T12:30:00" });
  });
  test("big-endian blocks, with or without the Exif header", () => {
    expect(sut(bigEndianBlock())).toEqual({ make: "BE" });
    expect(sut(new Uint8Array([...Buffer.from("Exif\0\0", "latin1"), ...bigEndianBlock()]))).toEqual({ make: "BE" });
  });
  test("never throws on garbage: empty, wrong magic, offsets past the end, a block cut short", async () => {
    expect(sut(undefined)).toEqual({});
    expect(sut(new Uint8Array(100))).toEqual({});
    const block = bigEndianBlock();
    new DataView(block.buffer).setUint32(4, 1_000_000);
    expect(sut(block)).toEqual({});
    const { exif } = await sharp(await orientedJpeg(40, 20)).metadata();
    for (let cut = 0; cut < exif!.length; cut += 7) expect(() => sut(exif!.subarray(0, cut))).not.toThrow();
  });
});
