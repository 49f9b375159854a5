import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Db } from "../../db/client.ts";
import { mediaObjects } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import { assertBucketAllowed } from "../access/visibility.ts";
import { errors } from "../core/errors.ts";
import { prepared } from "../core/prepared.ts";

export type ObjectRef = typeof mediaObjects.$inferSelect;

/**
 * A media object another record may point at: live (not soft-deleted) and in the caller's
 * organization, else 404 whatever the reason; then, for a bucket-restricted key, in its
 * bucket (403, as the object was found).
 * `lock`: hold the row until the transaction ends, so changes to the object's labels serialize.
 */
export async function resolveLiveObject(
  db: Db,
  caller: Caller,
  objectId: string,
  opts: { what?: string; lock?: boolean } = {},
): Promise<ObjectRef> {
  const [row] = opts.lock
    ? await db
        .select()
        .from(mediaObjects)
        .where(and(eq(mediaObjects.id, objectId), eq(mediaObjects.orgId, caller.orgId), isNull(mediaObjects.deletedAt)))
        .limit(1)
        .for("no key update")
    : await prepared(db, "live_object", (d) =>
        d
          .select()
          .from(mediaObjects)
          .where(and(eq(mediaObjects.id, sql.placeholder("id")), eq(mediaObjects.orgId, sql.placeholder("orgId")), isNull(mediaObjects.deletedAt)))
          .limit(1)
          .prepare("live_object"),
      ).execute({ id: objectId, orgId: caller.orgId });
  if (!row) throw errors.notFound(opts.what ?? "Media object");
  assertBucketAllowed(caller, row.bucketId, opts.what ?? "The media object");
  return row;
}

/**
 * Join condition for counting the objects that carry a tag or category as the caller may
 * see them: soft-deleted objects never count, and a bucket-restricted key counts only its bucket.
 */
export function countedObjects(caller: Caller, objectIdColumn: AnyPgColumn): SQL {
  const live = and(eq(mediaObjects.id, objectIdColumn), isNull(mediaObjects.deletedAt));
  return (caller.bucketId ? and(live, eq(mediaObjects.bucketId, caller.bucketId)) : live) as SQL;
}
