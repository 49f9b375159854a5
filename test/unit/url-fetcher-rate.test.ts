import { afterAll, describe, expect, test } from "bun:test";
import { urlFetcher } from "../../worker/url-fetcher.ts";
import { startTrickler } from "../support/trickle.ts";

/**
 * The import fetcher's byte-rate floor: a server that trickles (or never answers) is stopped
 * once a window passes with fewer bytes than the floor, long before the whole fetch's deadline.
 */
// One byte every 100 ms, for ever; /hang never answers, /quick answers 4,000 bytes at once.
const files = startTrickler(100, (path) => (path === "/hang" ? new Promise<Response>(() => {}) : path === "/quick" ? new Response(new Uint8Array(4000)) : undefined));
afterAll(() => files.stop());

const base = files.url("");
const fetcher = urlFetcher({ allowPrivate: true });
const options = (minRate?: { bytes: number; windowMs: number }) => ({ maxBytes: 1_000_000, timeoutMs: 60_000, maxRedirects: 0, onHeaders: async () => {}, onProgress: () => {}, ...(minRate ? { minRate } : {}) });

describe("url fetcher's rate floor", () => {
  test("a body that trickles below the floor is stopped after about one window, as a timeout that says why", async () => {
    const started = Date.now();
    // About 10 bytes a second against a floor of 100 bytes a second.
    await expect(fetcher.fetch(`${base}/trickle`, options({ bytes: 100, windowMs: 1000 }))).rejects.toMatchObject({
      code: "timeout",
      message: "Fewer than 100 bytes arrived in 1 s: the transfer was too slow and was stopped",
    });
    // Not the whole fetch's 60 s deadline.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  test("a server that never answers is stopped by the floor too", async () => {
    await expect(fetcher.fetch(`${base}/hang`, options({ bytes: 1, windowMs: 1000 }))).rejects.toMatchObject({ code: "timeout", message: expect.stringContaining("too slow") });
  });

  test("a body above the floor is fetched whole; a floor of 0 bytes is none", async () => {
    const file = await fetcher.fetch(`${base}/quick`, options({ bytes: 100, windowMs: 1000 }));
    expect(file.size).toBe(4000);
    await file.discard();
    // 10 bytes a second passes a floor of 5 a second.
    const slow = fetcher.fetch(`${base}/trickle`, { ...options({ bytes: 5, windowMs: 1000 }), timeoutMs: 2500 });
    await expect(slow).rejects.toMatchObject({ code: "timeout", message: "No complete answer within 2500 ms" });
    await expect(fetcher.fetch(`${base}/trickle`, { ...options({ bytes: 0, windowMs: 1000 }), timeoutMs: 2500 })).rejects.toMatchObject({ message: "No complete answer within 2500 ms" });
  });
});
