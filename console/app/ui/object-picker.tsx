import { useEffect, useState } from "preact/hooks";
import { call } from "../api.ts";
import { ErrorNote } from "./kit.tsx";
import { type MediaObject, Thumb } from "./media.tsx";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Picks a media object by what a person knows of it (its name, a word of its key, a tag), with
 * the full-text search; a pasted id is looked up too. `onPick(null)` clears the choice.
 */
export function ObjectPicker(props: { label: string; picked: MediaObject | null; onPick: (o: MediaObject | null) => void; kind?: string }) {
  const [text, setText] = useState("");
  const [found, setFound] = useState<MediaObject[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const q = text.trim();
    if (!q) return setFound(null);
    let live = true;
    // Typing pauses before a search: one request per word, not per key press.
    const timer = setTimeout(async () => {
      try {
        const hits = UUID.test(q)
          ? [await call<MediaObject>("media_get", { id: q })]
          : (await call<{ media: MediaObject[] }>("search", { q: q.endsWith("*") || q.includes(" ") ? q : `${q}*`, limit: 8, ...(props.kind ? { kind: props.kind } : {}) })).media;
        if (live) {
          setFound(hits);
          setError(null);
        }
      } catch (err) {
        if (live) setError(err);
      }
    }, 250);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [text]);

  if (props.picked) {
    return (
      <div class="picker-picked">
        <span class="picker-thumb">
          <Thumb object={props.picked} eager />
        </span>
        <span class="picker-name">{props.picked.fileName}</span>
        <button type="button" class="small" aria-label={`Choose another object than ${props.picked.fileName}`} onClick={() => props.onPick(null)}>
          Change
        </button>
      </div>
    );
  }
  return (
    <div class="picker">
      <label class="field">
        <span class="field-label">{props.label}</span>
        <input type="search" value={text} placeholder="Name, word or id…" onInput={(e) => setText((e.target as HTMLInputElement).value)} />
      </label>
      <ErrorNote error={error} />
      {found && found.length === 0 && <p class="muted small-text">No object matches “{text.trim()}”.</p>}
      {found && found.length > 0 && (
        <ul class="picker-results" aria-label={`Objects matching ${text.trim()}`}>
          {found.map((o) => (
            <li key={o.id}>
              <button type="button" class="picker-option" onClick={() => props.onPick(o)}>
                <span class="picker-thumb">
                  <Thumb object={o} eager />
                </span>
                <span class="picker-name">{o.fileName}</span>
                <span class="muted small-text">{o.key}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
