import { sql } from "drizzle-orm";
import { bigint, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import type { Label } from "../../contract/labels.ts";
import { MEDIA_KINDS } from "../../contract/media.ts";
import { bucketRef } from "./buckets.ts";
import { organizationRef } from "./identity.ts";
import { createdAt, updatedAt, uuidKey } from "./columns.ts";

export const mediaObjects = pgTable(
  "media_objects",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    bucketId: bucketRef().notNull(),
    key: text("key").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    contentType: text("content_type").notNull(),
    kind: text("kind", { enum: MEDIA_KINDS }).notNull(),
    metadata: jsonb("metadata").$type<Record<string, string | number | boolean | null>>().notNull().default({}),
    etag: text("etag"),
    /** Technical facts the worker extracted (dimensions, duration, pages, EXIF); `metadata` stays the user's. */
    info: jsonb("info").$type<Record<string, unknown>>().notNull().default({}),
    /**
     * The object's tags and categories as its view shows them, rewritten by the database's
     * triggers in the transaction that changes its links or renames a label, whichever release
     * runs it (domain/labels/object-labels.ts): a page of views reads them with its rows
     * instead of probing both label tables once per object.
     */
    labels: jsonb("labels").$type<{ tags: Label[]; categories: Label[] }>().notNull().default({ tags: [], categories: [] }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    // Soft delete: hidden everywhere at once; the bytes are purged after a retention period.
    deletedAt: timestamp("deleted_at", { withTimezone: true }),
    /** Set when the purge job for a soft-deleted object has been enqueued. */
    purgeQueuedAt: timestamp("purge_queued_at", { withTimezone: true }),
  },
  (t) => [
    // One live object per key; soft-deleted rows keep their history beside it.
    uniqueIndex("media_bucket_key_live_uq").on(t.bucketId, t.key).where(sql`${t.deletedAt} is null`),
    index("media_org_created_idx").on(t.orgId, t.createdAt).where(sql`${t.deletedAt} is null`),
    // Substring search on keys (GET /api/media?search=) stays indexed at a million objects.
    // Always within one organization: the organization in the index (btree_gin) keeps other
    // organizations' matches out of the candidates, which a key-only index handed over and the
    // search then read and dropped (one organization's many keys slowed every other's search).
    index("media_org_key_trgm_idx").using("gin", t.orgId, t.key.op("gin_trgm_ops")),
    index("media_deleted_idx").on(t.deletedAt).where(sql`${t.deletedAt} is not null`),
    // What a presigned upload's write condition reads: the deleted objects at a key (their bytes
    // may still be there). The trigram index answers key equality too, but slowly on common trigrams.
    index("media_bucket_key_deleted_idx").on(t.bucketId, t.key).where(sql`${t.deletedAt} is not null`),
    // The trash: an organization's deleted objects, newest first.
    index("media_org_trash_idx").on(t.orgId, t.deletedAt).where(sql`${t.deletedAt} is not null`),
  ],
);

/** The media object the row is about (it goes with the object). */
export const mediaObjectRef = () => uuid("object_id").references(() => mediaObjects.id, { onDelete: "cascade" });
