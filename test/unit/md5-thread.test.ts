import { describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { md5OnThread } from "../../storage/local-s3/md5-thread.ts";

/** The storage node's MD5 thread: uploads in flight at once each get their own digest. */
describe("MD5 on the hashing thread", () => {
  test("interleaved uploads each get the digest of their own bytes, in order", async () => {
    const bodies = Array.from({ length: 12 }, (_, i) => Array.from({ length: 1 + (i % 5) }, () => randomBytes(1 + Math.floor(Math.random() * 70_000))));
    const hashes = bodies.map(() => md5OnThread());
    const longest = Math.max(...bodies.map((b) => b.length));
    for (let c = 0; c < longest; c++) bodies.forEach((chunks, i) => chunks[c] && hashes[i]!.update(chunks[c]!));
    const got = await Promise.all(hashes.map((h) => h.digest()));
    expect(got).toEqual(bodies.map((chunks) => createHash("md5").update(Buffer.concat(chunks)).digest("hex")));
  });

  test("a chunk that shares a pool with other bytes stays readable: the thread gets a copy", async () => {
    const pool = Buffer.alloc(64, 7);
    const view = pool.subarray(8, 24);
    const h = md5OnThread();
    h.update(view);
    expect(await h.digest()).toBe(createHash("md5").update(Buffer.alloc(16, 7)).digest("hex"));
    expect(pool.byteLength).toBe(64);
    expect(pool[40]).toBe(7);
    expect(view.byteLength).toBe(16);
  });

  test("an empty body and a discarded hash: the empty digest, and the others unaffected", async () => {
    const empty = md5OnThread();
    const dropped = md5OnThread();
    dropped.update(Buffer.from("never finished"));
    dropped.discard();
    const kept = md5OnThread();
    kept.update(Buffer.from("kept"));
    expect(await empty.digest()).toBe("d41d8cd98f00b204e9800998ecf8427e");
    expect(await kept.digest()).toBe(createHash("md5").update("kept").digest("hex"));
  });
});
