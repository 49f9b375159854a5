import { bigint, index, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, updatedAt, uuidKey } from "./columns.ts";
import { bucketRef } from "./buckets.ts";
import { organizationRef } from "./identity.ts";

/**
 * One import by URL (media_import): what was asked, and how far the worker got. `createdAt` is
 * also the created_at of the upload reservation made for it, which is how a failed import
 * finds its own reservation to release.
 */
export const mediaImports = pgTable(
  "media_imports",
  {
    id: uuidKey(),
    orgId: organizationRef(),
    bucketId: bucketRef().notNull(),
    key: text("key").notNull(),
    url: text("url").notNull(),
    /** queued, fetching, stored, failed (contract/imports.ts). */
    state: text("state").notNull().default("queued"),
    declaredSize: bigint("declared_size", { mode: "number" }),
    declaredContentType: text("declared_content_type"),
    bytesReceived: bigint("bytes_received", { mode: "number" }).notNull().default(0),
    totalBytes: bigint("total_bytes", { mode: "number" }),
    contentType: text("content_type"),
    objectId: uuid("object_id"),
    error: jsonb("error").$type<{ code: string; message: string } | null>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("media_imports_org_idx").on(t.orgId, t.createdAt)],
);
