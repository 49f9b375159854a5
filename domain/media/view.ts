import type { MediaObject, ThumbnailSummary } from "../../contract/media.ts";
import type { mediaObjects } from "../../db/schema/index.ts";
import type { ObjectLabels } from "../labels/object-labels.ts";
import { fileNameOf } from "./kind.ts";

export type MediaRow = typeof mediaObjects.$inferSelect;

export function toMediaView(row: MediaRow, labels?: ObjectLabels, thumbnail: ThumbnailSummary | null = null): MediaObject {
  return {
    id: row.id,
    bucketId: row.bucketId,
    key: row.key,
    fileName: fileNameOf(row.key),
    size: row.size,
    contentType: row.contentType,
    kind: row.kind,
    etag: row.etag,
    metadata: row.metadata,
    info: row.info,
    thumbnail,
    tags: labels?.tags ?? [],
    categories: labels?.categories ?? [],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
