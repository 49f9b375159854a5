import type { MediaObject, ThumbnailSummary } from "../../contract/media.ts";
import type { mediaObjects } from "../../db/schema/index.ts";
import type { ObjectLabels } from "../labels/object-labels.ts";
import { fileNameOf } from "./kind.ts";

export type MediaRow = typeof mediaObjects.$inferSelect;

/** What a view shows of an object's row (a listing reads only these). */
export type MediaViewRow = Pick<MediaRow, "id" | "bucketId" | "key" | "size" | "contentType" | "kind" | "etag" | "metadata" | "info" | "createdAt" | "updatedAt">;

/** A view's row whose times may come already written as the view writes them (`…T…` with milliseconds and `Z`). */
type ViewSource = Omit<MediaViewRow, "createdAt" | "updatedAt"> & { createdAt: Date | string; updatedAt: Date | string };

const stamp = (at: Date | string): string => (typeof at === "string" ? at : at.toISOString());

export function toMediaView(row: ViewSource, labels?: ObjectLabels, thumbnail: ThumbnailSummary | null = null): MediaObject {
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
    createdAt: stamp(row.createdAt),
    updatedAt: stamp(row.updatedAt),
  };
}
