import { useEffect, useState } from "preact/hooks";
import { cachedThumbnail, thumbnail } from "../thumbs.ts";

export interface Label {
  id: string;
  name: string;
  slug: string;
}

export interface MediaObject {
  id: string;
  bucketId: string;
  key: string;
  fileName: string;
  size: number;
  contentType: string;
  kind: string;
  etag: string | null;
  metadata: Record<string, string | number | boolean | null>;
  info: Record<string, unknown>;
  /** `path`: in lists, a signed URL that needs no credential (never spends the rate limit). */
  thumbnail: { state: string; width: number | null; height: number | null; contentType: string | null; etag: string | null; path?: string } | null;
  tags: Label[];
  categories: Label[];
  createdAt: string;
  updatedAt: string;
}

const KIND_PATHS: Record<string, string> = {
  image: "M4 5h16v14H4z M4 16l5-5 4 4 3-3 4 4 M15 9.5a1.5 1.5 0 1 0 .01 0",
  video: "M3 6h13v12H3z M16 10l5-3v10l-5-3",
  audio: "M9 18V6l10-2v12 M9 18a3 3 0 1 1-.01 0 M19 16a3 3 0 1 1-.01 0",
  pdf: "M6 3h9l4 4v14H6z M15 3v4h4 M9 12h7 M9 16h7",
  "3d": "M12 3l8 4.5v9L12 21l-8-4.5v-9z M12 12l8-4.5 M12 12v9 M12 12L4 7.5",
  other: "M6 3h9l4 4v14H6z M15 3v4h4",
};

export function KindIcon({ kind, size = 40 }: { kind: string; size?: number }) {
  const d = KIND_PATHS[kind] ?? KIND_PATHS.other!;
  return (
    <svg class="kind-icon" width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      {d.split(" M").map((p, i) => (
        <path key={i} d={i === 0 ? p : `M${p}`} fill="none" stroke="currentColor" stroke-width="1.5" stroke-linejoin="round" stroke-linecap="round" />
      ))}
    </svg>
  );
}

/**
 * A tile's picture: the thumbnail when it is ready, a placeholder while it is made, else the
 * kind's icon. A listed object's thumbnail has a signed path: the browser loads (and caches)
 * it itself, outside the credential's rate limit. An object read on its own has none, and is
 * fetched with the bearer (thumbs.ts).
 */
export function Thumb({ object, eager = false }: { object: MediaObject; eager?: boolean }) {
  const t = object.thumbnail;
  if (t?.state === "ready" && t.path) return <img class="thumb-img" src={t.path} alt="" decoding="async" loading={eager ? "eager" : "lazy"} draggable={false} />;
  return <FetchedThumb object={object} eager={eager} />;
}

function FetchedThumb({ object, eager }: { object: MediaObject; eager: boolean }) {
  const t = object.thumbnail;
  const etag = t?.state === "ready" ? t.etag : null;
  const [url, setUrl] = useState<string | null | undefined>(etag ? cachedThumbnail(object.id, etag) : null);
  useEffect(() => {
    if (!etag) return setUrl(null);
    const known = cachedThumbnail(object.id, etag);
    if (known !== undefined) return setUrl(known);
    let live = true;
    // A tile that scrolls past quickly never asks: only one still shown after a moment does.
    const timer = setTimeout(() => thumbnail(object.id, etag).then((u) => live && setUrl(u)), eager ? 0 : 60);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [object.id, etag]);
  if (url) return <img class="thumb-img" src={url} alt="" decoding="async" draggable={false} />;
  if (t?.state === "pending" || (etag && url === undefined)) {
    return (
      <span class="thumb-pending" title="Thumbnail being made">
        <KindIcon kind={object.kind} size={28} />
      </span>
    );
  }
  return (
    <span class="thumb-icon" title={t?.state === "failed" ? "No thumbnail could be made" : `${object.kind} file`}>
      <KindIcon kind={object.kind} />
    </span>
  );
}
