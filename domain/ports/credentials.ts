import type { Scope } from "../access/caller.ts";

/** An API key as authentication needs it. */
export interface KeyCredential {
  id: string;
  orgId: string;
  userId: string;
  scopes: Scope[];
  bucketId: string | null;
  expiresAt: Date;
}

/**
 * Recently authenticated API keys, so most requests skip the database lookup. Whatever
 * changes or removes a key (rotate, delete, the deletion of the bucket a key is restricted
 * to) calls `forget` after its commit, and every instance drops the entry.
 */
export interface CredentialCache {
  /** Read before the database lookup and passed to `put`: a fill that raced a `forget` is dropped. */
  version(): number;
  get(secretHash: string): KeyCredential | undefined;
  put(secretHash: string, key: KeyCredential, version: number): void;
  forget(target: { keyId: string } | { bucketId: string }): Promise<void>;
}
