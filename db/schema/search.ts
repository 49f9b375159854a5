import { sql } from "drizzle-orm";
import { bigint, customType, index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { MEDIA_KINDS } from "../../contract/media.ts";
import { organizationRef } from "./identity.ts";
import { mediaObjects } from "./media.ts";

const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });

/**
 * One row per live media object with everything a search filters, ranks and counts facets
 * on, so that a search reads this table alone (no join per match). Kept beside the object,
 * so media queries never carry it, and rewritten in the same transaction as every change to
 * the object's key, labels or metadata (domain/search/index-rows.ts): a change is searchable as soon as
 * its call returns. Soft-deleted objects have no row.
 * The vector is generated: key and file name weigh most, then tag and category names, then
 * metadata values, then the words inside the object (body). Separators in paths and names become spaces so that "img_2026.jpg"
 * matches "img", "2026" and "jpg" (queries get the same treatment).
 */
export const mediaSearch = pgTable(
  "media_search",
  {
    objectId: uuid("object_id")
      .primaryKey()
      .references(() => mediaObjects.id, { onDelete: "cascade" }),
    orgId: organizationRef(),
    bucketId: uuid("bucket_id").notNull(),
    kind: text("kind", { enum: MEDIA_KINDS }).notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
    tagIds: uuid("tag_ids").array().notNull().default([]),
    categoryIds: uuid("category_ids").array().notNull().default([]),
    key: text("key").notNull(),
    labels: text("labels").notNull().default(""),
    meta: text("meta").notNull().default(""),
    /** The words inside the object (media_text, capped), weighted below everything people typed. */
    body: text("body").notNull().default(""),
    vector: tsvector("vector")
      .notNull()
      .generatedAlwaysAs(
        sql`setweight(to_tsvector('simple'::regconfig, regexp_replace(key, '[/._\\-]+', ' ', 'g')), 'A') || setweight(to_tsvector('simple'::regconfig, regexp_replace(labels, '[/._\\-]+', ' ', 'g')), 'B') || setweight(to_tsvector('simple'::regconfig, regexp_replace(meta, '[/._\\-]+', ' ', 'g')), 'C') || setweight(to_tsvector('simple'::regconfig, body), 'D')`,
      ),
  },
  (t) => [index("media_search_org_vector_idx").using("gin", t.orgId, t.vector), index("media_search_org_idx").on(t.orgId)],
);
