// Flexible checksums (x-amz-checksum-*): clients may send one as a header or as an
// aws-chunked trailer. CRC32, CRC32C, SHA-1 and SHA-256 are verified; others
// (e.g. CRC64NVME) are accepted unverified.

import { createHash, type Hash } from "node:crypto";
import { crc32 } from "node:zlib";

export interface Checksum {
  update(data: Uint8Array): void;
  digestBase64(): string;
}

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crcToBase64(v: number): string {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0);
  return b.toString("base64");
}

class Crc32 implements Checksum {
  private v = 0;
  update(d: Uint8Array) {
    this.v = crc32(d, this.v);
  }
  digestBase64() {
    return crcToBase64(this.v);
  }
}

class Crc32c implements Checksum {
  private v = 0xffffffff;
  update(d: Uint8Array) {
    let c = this.v;
    for (let i = 0; i < d.length; i++) c = CRC32C_TABLE[(c ^ d[i]!) & 0xff]! ^ (c >>> 8);
    this.v = c;
  }
  digestBase64() {
    return crcToBase64(this.v ^ 0xffffffff);
  }
}

class Digest implements Checksum {
  private h: Hash;
  constructor(alg: string) {
    this.h = createHash(alg);
  }
  update(d: Uint8Array) {
    this.h.update(d);
  }
  digestBase64() {
    return this.h.digest("base64");
  }
}

/** Algorithm name as it appears in the header (x-amz-checksum-<name>) -> label S3 uses in messages. */
export const CHECKSUM_LABELS: Record<string, string> = {
  crc32: "CRC32",
  crc32c: "CRC32C",
  crc64nvme: "CRC64NVME",
  sha1: "SHA1",
  sha256: "SHA256",
};

export function createChecksum(name: string): Checksum | undefined {
  switch (name) {
    case "crc32":
      return new Crc32();
    case "crc32c":
      return new Crc32c();
    case "sha1":
      return new Digest("sha1");
    case "sha256":
      return new Digest("sha256");
    default:
      return undefined;
  }
}
