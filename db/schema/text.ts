import { index, integer, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { organizationRef } from "./identity.ts";
import { mediaObjects } from "./media.ts";

/**
 * The words found inside an object (domain/search/text.ts): a PDF's text per page, a plain
 * text file's text, or what OCR read in an image. One row per page (1 for unpaged sources), so
 * a search can name the page a word is on. `etag` is the version the text was read from: a
 * newer upload at the key replaces the rows.
 */
export const mediaText = pgTable(
  "media_text",
  {
    objectId: uuid("object_id")
      .notNull()
      .references(() => mediaObjects.id, { onDelete: "cascade" }),
    orgId: organizationRef(),
    source: text("source", { enum: ["pdf", "text", "ocr"] }).notNull(),
    page: integer("page").notNull(),
    text: text("text").notNull(),
    etag: text("etag"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.objectId, t.source, t.page] }), index("media_text_org_idx").on(t.orgId)],
);

/**
 * A per-organization backfill over its objects in id order (domain/search/backfill.ts): the
 * last id done is kept, so a run that stops resumes there and a second run of a finished one
 * starts over harmlessly. `kind` names what is filled in ("text"), so other backfills can share
 * the table.
 */
export const backfillRuns = pgTable(
  "backfill_runs",
  {
    orgId: organizationRef(),
    kind: text("kind").notNull(),
    cursor: uuid("cursor"),
    processed: integer("processed").notNull().default(0),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.kind] })],
);
