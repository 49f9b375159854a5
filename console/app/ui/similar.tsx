import { useEffect, useState } from "preact/hooks";
import { call, can } from "../api.ts";
import { bytes } from "../format.ts";
import { setQuery } from "../router.ts";
import { thumbnail } from "../thumbs.ts";
import { ErrorNote, Loading, useLoad } from "./kit.tsx";
import type { MediaObject } from "./media.tsx";

/** Kinds whose thumbnail is a picture of the file, the only ones with a picture hash. */
const PICTURES = new Set(["image", "video", "pdf"]);

/**
 * "Similar" in an object's detail panel: the objects whose picture looks like this one's
 * (media_similar), nearest first, each opening in the same panel.
 */
export function SimilarSection({ object }: { object: MediaObject }) {
  if (!can("media_similar") || !PICTURES.has(object.kind) || object.thumbnail?.state !== "ready") return null;
  return <SimilarList id={object.id} />;
}

function SimilarList({ id }: { id: string }) {
  const found = useLoad(() => call<{ data: { distance: number; object: MediaObject }[]; total: number }>("media_similar", { id, limit: 12 }), [id]);
  return (
    <section class="detail-section similar">
      <h3>Similar{found.data ? ` (${found.data.total})` : ""}</h3>
      <ErrorNote error={found.error} />
      {!found.data ? (
        <Loading />
      ) : found.data.data.length === 0 ? (
        <p class="muted">No similar pictures.</p>
      ) : (
        <ul class="similar-list" style={{ listStyle: "none", padding: 0, margin: 0, display: "grid", gridTemplateColumns: "repeat(auto-fill, minmax(6rem, 1fr))", gap: "0.5rem" }}>
          {found.data.data.map((f) => (
            <li key={f.object.id}>
              <button type="button" class="similar-item" style={{ display: "flex", flexDirection: "column", alignItems: "stretch", gap: "0.2rem", width: "100%", fontSize: "0.8rem", textAlign: "left" }} title={`${f.object.key} · ${bytes(f.object.size)} · ${f.distance} of 64 bits differ`} onClick={() => setQuery({ object: f.object.id, view: null })}>
                <SimilarThumb object={f.object} />
                <span class="similar-name" style={{ overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" }}>{f.object.fileName}</span>
                <span class="muted">{f.distance === 0 ? "same picture" : `${f.distance} bits apart`}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function SimilarThumb({ object }: { object: MediaObject }) {
  const [url, setUrl] = useState<string | null>(null);
  const t = object.thumbnail;
  useEffect(() => {
    if (t?.state === "ready" && t.etag) void thumbnail(object.id, t.etag).then(setUrl);
  }, [object.id, t?.etag]);
  const box = { width: "100%", aspectRatio: "1", objectFit: "cover", background: "var(--surface-2)", borderRadius: "4px", display: "block" } as const;
  return url ? <img src={url} alt="" class="similar-thumb" style={box} /> : <span class="similar-thumb" style={box} />;
}
