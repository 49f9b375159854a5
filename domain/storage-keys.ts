/**
 * Where things live in the one physical bucket (ARCHITECTURE.md). User objects sit under
 * their bucket's UUID; derivatives under a prefix that starts with "_", which no bucket
 * UUID can, so no object key can ever reach a derivative.
 */
export const objectPath = (bucketId: string, key: string) => `${bucketId}/${key}`;
export const bucketPrefix = (bucketId: string) => `${bucketId}/`;
export const derivativePrefix = (bucketId: string, objectId: string) => `_derivatives/${bucketId}/${objectId}/`;
export const bucketDerivativesPrefix = (bucketId: string) => `_derivatives/${bucketId}/`;

/**
 * ARCHITECTURE.md: 1..1024 bytes of UTF-8, no leading "/", no "." or ".." segment, no
 * control characters. Returns the problem, or null when the key is fine.
 */
export function objectKeyProblem(key: string): string | null {
  const bytes = Buffer.byteLength(key, "utf8");
  if (bytes < 1 || bytes > 1024) return "must be 1 to 1024 bytes of UTF-8";
  if (key.startsWith("/")) return "must not start with '/'";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: that is the point
  if (/[\u0000-\u001f\u007f]/.test(key)) return "must not contain control characters";
  if (key.split("/").some((s) => s === "." || s === "..")) return "must not contain '.' or '..' segments";
  if (!key.isWellFormed()) return "must be valid UTF-8";
  return null;
}
