/**
 * Object keys, end to end: whatever key presign accepts must make a working upload (PUT,
 * confirm, the same key back, the same bytes streamed); every other key is a 400 at presign,
 * never an upload that can only fail later. Fixed nasty keys plus generated ones.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { MAX_OBJECT_KEY_BYTES } from "../../domain/media/storage-keys.ts";
import { newBucket } from "../support/objects.ts";
import { newOrg, startServer, type TestOrg, type TestServer } from "../support/server.ts";

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

let server: TestServer;
let org: TestOrg;
let bucket: { id: string };

beforeAll(async () => {
  server = await startServer();
  org = await newOrg(server);
  bucket = await newBucket(org, "keys");
});
afterAll(() => server.stop());

type Outcome = { refused: string } | { roundTrip: true };

let uploads = 0;
async function tryUpload(key: string): Promise<Outcome> {
  const body = `bytes of upload ${++uploads}`;
  const presigned = await org.admin.post("/api/presign/upload", { bucketId: bucket.id, key, contentType: "text/plain" });
  if (presigned.status !== 200) {
    expect(presigned.status).toBe(400);
    expect(presigned.body.error.code).toBe("validation_error");
    return { refused: (presigned.body.error.details ?? []).map((d: { message: string }) => d.message).join("; ") };
  }
  const put = await fetch(presigned.body.url, { method: "PUT", headers: presigned.body.headers, body });
  expect({ key, put: put.status }).toEqual({ key, put: 200 });
  const confirmed = await org.admin.post("/api/presign/confirm", { bucketId: bucket.id, key });
  expect({ key, confirm: confirmed.status }).toEqual({ key, confirm: 200 });
  const got = await org.admin.get(`/api/media/${confirmed.body.id}`);
  expect(got.body.key).toBe(key);
  const streamed = await fetch(`${server.url}/api/media/${confirmed.body.id}/stream`, { headers: { authorization: `Bearer ${org.adminKey.secret}` } });
  expect({ key, stream: streamed.status, body: await streamed.text() }).toEqual({ key, stream: 200, body });
  return { roundTrip: true };
}

const refused = (o: Outcome) => ("refused" in o ? o.refused : null);

describe("object keys", () => {
  test("keys the architecture forbids are refused at presign, with the reason", async () => {
    const cases: [string, RegExp][] = [
      ["/leading", /start with '\/'/],
      ["//double", /start with '\/'/],
      ["..", /'\.' or '\.\.'/],
      ["a/../b", /'\.' or '\.\.'/],
      ["a/./b", /'\.' or '\.\.'/],
      ["a/..", /'\.' or '\.\.'/],
      ["tab\there", /control/],
      ["nul\u0000", /control/],
      ["del\u007f", /control/],
      // C1 controls are control characters too.
      ["next-line\u0085", /control/],
      ["csi\u009b", /control/],
      ["\ufeffbom-first", /byte order mark/],
      ["lone\ud800", /UTF-8/],
      ["x".repeat(MAX_OBJECT_KEY_BYTES + 1), new RegExp(`bytes|<=${MAX_OBJECT_KEY_BYTES}`)],
      // Fewer characters than the limit, more bytes.
      ["ü".repeat(MAX_OBJECT_KEY_BYTES / 2 + 1), /bytes/],
    ];
    for (const [key, reason] of cases) expect({ key, reason: refused(await tryUpload(key)) }).toEqual({ key, reason: expect.stringMatching(reason) });
  });

  test("odd but allowed keys round-trip through presign, PUT, confirm and stream", async () => {
    const keys = [
      "a//b",
      "..a/b..",
      ".hidden/x",
      "a?b#c",
      "a%2Fb",
      "100%",
      "a b+c",
      "a\\b",
      "semi;colon&amp=1",
      "💥/é/e\u0301",
      "\u202eright-to-left",
      "mid\ufeffbom",
      "~/x",
      "_derivatives/not-really",
      "x".repeat(MAX_OBJECT_KEY_BYTES),
      "é".repeat(Math.floor(MAX_OBJECT_KEY_BYTES / 2)),
    ];
    for (const key of keys) expect({ key, outcome: await tryUpload(key) }).toEqual({ key, outcome: { roundTrip: true } });
  });

  test(`generated keys: refused at presign, or a working upload (FUZZ_SEED=${SEED})`, async () => {
    const segment = fc.oneof(fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }), fc.string({ unit: "binary", maxLength: 6 }), fc.constantFrom("..", ".", "", " "));
    const key = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/"));
    for (const k of fc.sample(key, { seed: SEED, numRuns: 25 })) await tryUpload(k);
  });
});
