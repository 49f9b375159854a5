import { sql } from "drizzle-orm";
import { bigint, boolean, doublePrecision, index, integer, pgTable, real, text, timestamp, uuid } from "drizzle-orm/pg-core";
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
    /** 64-bit difference hash of the picture (images, video posters, PDF first pages), as a signed bigint. */
    phash: bigint("phash", { mode: "bigint" }),
    /**
     * The hash's four 16-bit segments, each indexed: two hashes within distance r share at
     * least one segment within r / 4 (pigeonhole), so a similarity query probes a few index
     * keys per segment instead of scanning (domain/media/similar.ts).
     */
    phash0: integer("phash0"),
    phash1: integer("phash1"),
    phash2: integer("phash2"),
    phash3: integer("phash3"),
    /** The dominant colour in CIELAB (domain/media/colors.ts), for the `color` filter. */
    colorL: real("color_l"),
    colorA: real("color_a"),
    colorB: real("color_b"),
  },
  (t) => [
    index("object_facts_org_sha256_idx").on(t.orgId, t.sha256),
    index("object_facts_org_taken_idx").on(t.orgId, t.takenAt),
    index("object_facts_org_width_idx").on(t.orgId, t.width),
    index("object_facts_org_duration_idx").on(t.orgId, t.duration),
    ...([0, 1, 2, 3] as const).map((i) => index(`object_facts_org_phash${i}_idx`).on(t.orgId, t[`phash${i}`]).where(sql`${t[`phash${i}`]} is not null`)),
    // a* and b* bound the range scan; L* is checked inside the index.
    index("object_facts_org_color_idx").on(t.orgId, t.colorA, t.colorB, t.colorL).where(sql`${t.colorL} is not null`),
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
