import { describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { writeTemp } from "../../storage/local-s3/files.ts";
import { DROP_FROM_CACHE_BYTES } from "../../storage/local-s3/page-cache.ts";

/** Bytes of `path` in the page cache, by util-linux's fincore (mincore(2)). */
function cachedBytes(path: string): number {
  const out = Bun.spawnSync(["fincore", "--bytes", "--noheadings", "--raw", "--output", "RES", path]);
  if (out.exitCode !== 0) throw new Error(`fincore failed: ${out.stderr.toString()}`);
  return Number(out.stdout.toString().trim());
}

async function* chunked(bytes: Uint8Array, size = 1 << 20): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size);
}

/**
 * A directory on a disk: the test runner's TMPDIR may be in memory (tmpfs), where the page cache
 * is the storage and nothing is dropped. /var/tmp is on the disk on Debian.
 */
const ON_DISK = "/var/tmp";
const TMPFS = 0x01021994;
const onDisk = existsSync(ON_DISK) && statfsSync(ON_DISK).type !== TMPFS;
const linux = process.platform === "linux" && Bun.which("fincore") !== null && onDisk;

/** The storage node's writes: a large body leaves the page cache once durable, a small one stays. */
describe.skipIf(!linux)("page cache after a write", () => {
  test("a body of DROP_FROM_CACHE_BYTES or more is dropped after its fsync, its bytes intact; a small one stays cached", async () => {
    const dir = mkdtempSync(join(ON_DISK, "page-cache-"));
    try {
      const large = randomBytes(DROP_FROM_CACHE_BYTES + 123_457);
      const small = randomBytes(200_000);
      const a = await writeTemp(dir, chunked(large));
      const b = await writeTemp(dir, chunked(small));
      expect(cachedBytes(a.path)).toBeLessThan(1024 * 1024);
      expect(cachedBytes(b.path)).toBeGreaterThanOrEqual(small.byteLength);
      // Nothing is lost: the bytes come back from the disk, and the ETag is theirs.
      expect(readFileSync(a.path).equals(large)).toBe(true);
      expect(a.md5).toBe(createHash("md5").update(large).digest("hex"));
      expect(a.size).toBe(large.byteLength);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
