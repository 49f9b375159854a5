import { call } from "../api.ts";
import { useLoad } from "./kit.tsx";
import { KindIcon, type MediaObject, Thumb } from "./media.tsx";

/** A media object's thumbnail by id, with its name (sets and storyboards hold ids). */
export function ObjectThumb({ id, deleted, caption = true }: { id: string; deleted?: boolean; caption?: boolean }) {
  const o = useLoad(() => (deleted ? Promise.resolve(null) : call<MediaObject>("media_get", { id })), [id, deleted]);
  return (
    <span class="object-thumb">
      <span class="tile-pic">{o.data ? <Thumb object={o.data} eager /> : <KindIcon kind="other" />}</span>
      {caption && <span class="tile-name">{deleted ? "(deleted)" : o.data?.fileName ?? (o.error ? "(unavailable)" : "…")}</span>}
    </span>
  );
}
