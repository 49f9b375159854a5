import { describe, expect, test } from "bun:test";
import { derivativeKey } from "../../domain/derivatives/derivatives.ts";
import { etagMatches } from "../../tools/derivatives.ts";
import { displayTransform, frameInterest } from "../../worker/derivatives/av.ts";

describe("displayTransform", () => {
  const matrix = (a: number, b: number, c: number, d: number) => Buffer.from(new Int32Array([a, b, 0, c, d, 0, 0, 0, 1 << 30]).buffer);
  test("quarter turns read as FFmpeg reads them; a mirrored matrix says so; none is upright", () => {
    const one = 65536;
    expect(displayTransform(matrix(0, -one, one, 0))).toEqual({ rotation: 90, flipped: false });
    expect(displayTransform(matrix(0, one, -one, 0))).toEqual({ rotation: 270, flipped: false });
    expect(displayTransform(matrix(-one, 0, 0, -one))).toEqual({ rotation: 180, flipped: false });
    expect(displayTransform(matrix(-one, 0, 0, one))).toEqual({ rotation: 0, flipped: true });
    expect(displayTransform(null)).toEqual({ rotation: 0, flipped: false });
    expect(displayTransform(Buffer.alloc(8))).toEqual({ rotation: 0, flipped: false });
  });
});

describe("frameInterest", () => {
  const frame = (fill: (x: number, y: number) => number, width = 64, height = 36) => {
    const data = Buffer.alloc(width * height * 3);
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.fill(fill(x, y), (y * width + x) * 3, (y * width + x) * 3 + 3);
    return { data, width, height };
  };
  test("a black or flat frame scores low, a picture high", () => {
    expect(frameInterest(frame(() => 0))).toBe(0);
    expect(frameInterest(frame(() => 128))).toBeLessThan(0.01);
    expect(frameInterest(frame((x) => (x % 8 === 0 ? 40 : 2)))).toBeLessThan(10);
    expect(frameInterest(frame((x, y) => (x * 4 + y * 3) % 256))).toBeGreaterThan(40);
  });
});

describe("small rules", () => {
  test("If-None-Match: lists, weak tags and *", () => {
    expect(etagMatches('"abc"', "abc")).toBe(true);
    expect(etagMatches('W/"abc"', "abc")).toBe(true);
    expect(etagMatches('"x", "abc"', "abc")).toBe(true);
    expect(etagMatches("*", "abc")).toBe(true);
    expect(etagMatches('"abcd"', "abc")).toBe(false);
    expect(etagMatches(null, "abc")).toBe(false);
  });
  test("derivative keys sit under the object's derivative prefix, named by the bytes' hash", () => {
    const key = derivativeKey({ bucketId: "b", objectId: "o", variant: "thumbnail", etag: "e1", contentType: "image/webp" });
    expect(key).toBe("_derivatives/b/o/thumbnail-e1.webp");
  });
});
