import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** The bearer value of an API key: 32 random bytes, 64 lowercase hex characters. */
export function newSecret(): string {
  return randomBytes(32).toString("hex");
}

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export function isSecretShape(token: string): boolean {
  return /^[0-9a-fA-F]{64}$/.test(token);
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}

const ACCESS_KEY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
export const ACCESS_KEY_PREFIX = "MSK";

/** Public identifier of a key, shown in lists and logs; never accepted as a bearer. */
export function newAccessKeyId(): string {
  const bytes = randomBytes(17);
  let out = ACCESS_KEY_PREFIX;
  for (const b of bytes) out += ACCESS_KEY_ALPHABET[b % 32];
  return out;
}
