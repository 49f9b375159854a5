import { boolean, doublePrecision, index, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { organizations } from "./identity.ts";
import { mediaObjects } from "./media.ts";

/**
 * The facts the worker found that lists and search filter on (the whole set is in the
 * object's `info`): content hash for finding duplicates, when a photo was taken, size,
 * duration. Valid for the object version whose ETag is `source_etag`; an overwrite makes the
 * row stale (filters compare it with the object's ETag) until its job writes the new one.
 */
export const objectFacts = pgTable(
  "object_facts",
  {
    objectId: uuid("object_id")
      .primaryKey()
      .references(() => mediaObjects.id, { onDelete: "cascade" }),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    sourceEtag: text("source_etag"),
    /** SHA-256 of the object's bytes, hex. */
    sha256: text("sha256"),
    takenAt: timestamp("taken_at", { withTimezone: true }),
    /** As displayed (orientation and rotation applied); pages of a PDF in points. */
    width: integer("width"),
    height: integer("height"),
    /** Seconds, audio and video. */
    duration: doublePrecision("duration"),
  },
  (t) => [
    index("object_facts_org_sha256_idx").on(t.orgId, t.sha256),
    index("object_facts_org_taken_idx").on(t.orgId, t.takenAt),
    index("object_facts_org_width_idx").on(t.orgId, t.width),
    index("object_facts_org_duration_idx").on(t.orgId, t.duration),
  ],
);

/** An organization's media settings; a row appears the first time one is needed. */
export const mediaSettings = pgTable("media_settings", {
  orgId: uuid("org_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  /** Renders carry a photo's camera facts; its GPS position only when this is false. */
  stripLocation: boolean("strip_location").notNull().default(true),
  /** OCR of image kinds on upload costs CPU: off until the organization turns it on. */
  ocrOnUpload: boolean("ocr_on_upload").notNull().default(false),
  ocrLanguages: text("ocr_languages").array().notNull().default(["eng"]),
  /** Key of the HMAC that signs render URLs: one per organization, never shown. */
  renderSecret: text("render_secret").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});
