import { and, eq, type SQL } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Caller } from "./caller.ts";
import { errors } from "../core/errors.ts";

/**
 * The rows of a table a caller may see: its organization's, and for a key restricted to one
 * bucket only the rows of that bucket. A row bound to no bucket (`bucket` null: an
 * unrestricted API key, a storyboard without a bucket) is hidden from such a key.
 */
export function visibleTo(caller: Pick<Caller, "orgId" | "bucketId">, columns: { org: AnyPgColumn; bucket: AnyPgColumn }): SQL {
  const org = eq(columns.org, caller.orgId);
  return caller.bucketId ? (and(org, eq(columns.bucket, caller.bucketId)) as SQL) : org;
}

/**
 * The same rule for one row already found in the caller's organization (so other
 * organizations' ids have given 404): a bucket-restricted key outside its bucket gets 403.
 */
export function assertBucketAllowed(caller: Pick<Caller, "bucketId">, rowBucketId: string | null, what = "This"): void {
  if (caller.bucketId !== null && rowBucketId !== caller.bucketId) {
    throw errors.forbidden(`${what} is outside the bucket this key is restricted to`);
  }
}
