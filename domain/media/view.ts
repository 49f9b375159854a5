import type { mediaObjects } from "../../db/schema/index.ts";
import type { ThumbnailSummary } from "../derivatives/derivatives.ts";
import type { Label, ObjectLabels } from "../labels/object-labels.ts";
import { fileNameOf, type MediaKind } from "./kind.ts";

export type MediaRow = typeof mediaObjects.$inferSelect;


export interface MediaView {
  id: string;
  bucketId: string;
  key: string;
  fileName: string;
  size: number;
  contentType: string;
  kind: MediaKind;
  etag: string | null;
  metadata: Record<string, string | number | boolean | null>;
  info: Record<string, unknown>;
  /** null: no thumbnail was ever planned (objects confirmed before derivatives existed). */
  thumbnail: ThumbnailSummary | null;
  tags: Label[];
  categories: Label[];
  createdAt: string;
  updatedAt: string;
}

export function toMediaView(row: MediaRow, labels?: ObjectLabels, thumbnail: ThumbnailSummary | null = null): MediaView {
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
