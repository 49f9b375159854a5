import { describe, expect, test } from "bun:test";
import { derivativeKey } from "../../domain/derivatives/derivatives.ts";
import { etagMatches } from "../../tools/derivatives.ts";
import { parsePdfInfo } from "../../worker/derivatives/pdf.ts";
import { parseProbe } from "../../worker/derivatives/probe.ts";
import { posterTime } from "../../worker/derivatives/video.ts";

describe("parseProbe", () => {
  test("a phone video: rotation from the display matrix turns the display size; cover art is not a video", () => {
    const p = parseProbe({
      streams: [
        { codec_type: "video", codec_name: "mjpeg", width: 600, height: 600, disposition: { attached_pic: 1 } },
        { codec_type: "video", codec_name: "hevc", width: 1920, height: 1080, avg_frame_rate: "30000/1001", side_data_list: [{ rotation: -90 }] },
        { codec_type: "audio", codec_name: "aac", sample_rate: "48000", channels: 2 },
      ],
      format: { duration: "12.5", bit_rate: "8000000", tags: { TITLE: "Holiday" } },
    });
    expect(p).toEqual({
      duration: 12.5,
      video: { codec: "hevc", width: 1920, height: 1080, rotation: 270, frameRate: 29.97 },
      audio: { codec: "aac", sampleRate: 48000, channels: 2 },
      bitRate: 8_000_000,
      tags: { title: "Holiday" },
    });
  });
  test("audio only, the old rotate tag, and missing fields", () => {
    expect(parseProbe({ streams: [{ codec_type: "video", codec_name: "jpg", width: 1, height: 1, disposition: { attached_pic: 1 } }, { codec_type: "audio" }] }).video).toBeNull();
    expect(parseProbe({ streams: [{ codec_type: "video", width: 2, height: 1, tags: { rotate: "90" } }] }).video?.rotation).toBe(90);
    expect(parseProbe({})).toEqual({ duration: null, video: null, audio: null, bitRate: null, tags: {} });
  });
});

describe("parsePdfInfo", () => {
  test("pages, first page size in points, title and author", () => {
    const text = "Title:          Annual report\nAuthor:         Someone\nPages:          12\nEncrypted:      no\nPage size:      595.276 x 841.89 pts (A4)\nPage rot:       0\n";
    expect(parsePdfInfo(text)).toEqual({ pages: 12, pageWidth: 595.276, pageHeight: 841.89, title: "Annual report", author: "Someone" });
    expect(parsePdfInfo("")).toEqual({ pages: null, pageWidth: null, pageHeight: null });
  });
});

describe("small rules", () => {
  test("the poster is taken at 10% of the duration, at 0 when unknown", () => {
    expect(posterTime(2)).toBe(0.2);
    expect(posterTime(3725.5)).toBe(372.55);
    expect(posterTime(null)).toBe(0);
    expect(posterTime(0)).toBe(0);
  });
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
