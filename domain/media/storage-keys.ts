/**
 * Where things live in the one physical bucket (S3_BUCKET). User objects sit under
 * their bucket's UUID; derivatives under a prefix that starts with "_", which no bucket
 * UUID can, so no object key can ever reach a derivative.
 */
export const objectPath = (bucketId: string, key: string) => `${bucketId}/${key}`;
export const bucketPrefix = (bucketId: string) => `${bucketId}/`;
export const derivativePrefix = (bucketId: string, objectId: string) => `_derivatives/${bucketId}/${objectId}/`;
export const bucketDerivativesPrefix = (bucketId: string) => `_derivatives/${bucketId}/`;

/**
 * S3 refuses storage keys over 1024 bytes, and a user key is stored under "<bucket UUID>/"
 * (37 bytes): longer keys could be presigned but their PUT would always fail.
 */
export const MAX_OBJECT_KEY_BYTES = 1024 - "00000000-0000-0000-0000-000000000000/".length;

/**
 * The object key rules (docs/conventions.md): UTF-8 of at most MAX_OBJECT_KEY_BYTES, no
 * leading "/", no "." or ".." segment, no control characters (C0, DEL and C1). Returns the
 * problem, or null when the key is fine.
 */
export function objectKeyProblem(key: string): string | null {
  const bytes = Buffer.byteLength(key, "utf8");
  if (bytes < 1 || bytes > MAX_OBJECT_KEY_BYTES) return `must be 1 to ${MAX_OBJECT_KEY_BYTES} bytes of UTF-8`;
  if (key.startsWith("/")) return "must not start with '/'";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: that is the point
  if (/[\u0000-\u001f\u007f-\u009f]/.test(key)) return "must not contain control characters";
  // The embedded database drops a byte order mark that starts a text value, so such a key
  // would be stored as another key than the bytes were written under.
  if (key.startsWith("\ufeff")) return "must not start with a byte order mark (U+FEFF)";
  if (key.split("/").some((s) => s === "." || s === "..")) return "must not contain '.' or '..' segments";
  if (!key.isWellFormed()) return "must be valid UTF-8";
  return null;
}
