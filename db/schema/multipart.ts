import { index, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { bucketRef } from "./buckets.ts";
import { organizationRef } from "./identity.ts";

/**
 * Every multipart upload id the service gave out, kept 30 days after it was created. Its
 * reservation goes when the upload closes (confirm, abort, the sweeper), and storage forgets
 * the id too; this row is what still tells a repeated complete-upload of a known id (409
 * conflict: its state forbids the call) from an id this service never issued (404).
 */
export const multipartUploads = pgTable(
  "multipart_uploads",
  {
    orgId: organizationRef(),
    bucketId: bucketRef().notNull(),
    key: text("key").notNull(),
    uploadId: text("upload_id").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.uploadId] }), index("multipart_uploads_created_idx").on(t.orgId, t.createdAt)],
);
