import { bigint, integer, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { DERIVATIVE_STATES } from "../../contract/media.ts";
import { mediaObjects } from "./media.ts";

/**
 * What the worker made from an object (thumbnail, poster, waveform, page), one row per
 * object and variant. The bytes live in storage under the object's derivative prefix.
 */
export const derivatives = pgTable(
  "derivatives",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    objectId: uuid("object_id")
      .notNull()
      .references(() => mediaObjects.id, { onDelete: "cascade" }),
    variant: text("variant").notNull(),
    state: text("state", { enum: DERIVATIVE_STATES }).notNull(),
    /** ETag of the object version this row describes: a job for an older version must not overwrite it. */
    sourceEtag: text("source_etag"),
    /** Set while ready; kept while pending so the job can delete the bytes it replaces. */
    storageKey: text("storage_key"),
    contentType: text("content_type"),
    size: bigint("size", { mode: "number" }),
    width: integer("width"),
    height: integer("height"),
    /** Hash of the derivative's bytes: the HTTP ETag, and part of the storage key. */
    etag: text("etag"),
    /** Why the state is failed or unsupported, in words a user can act on. */
    error: text("error"),
    /** Runs of the job for this version that got to an end (made it, or failed). */
    attempts: integer("attempts").notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("derivatives_object_variant_uq").on(t.objectId, t.variant)],
);
