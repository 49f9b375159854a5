import { useEffect, useState } from "preact/hooks";
import { call, can } from "../api.ts";
import { bytes, date, duration } from "../format.ts";
import { navigate } from "../router.ts";
import { thumbnail } from "../thumbs.ts";
import { Chip, ConfirmButton, CopyButton, ErrorNote, Loading, notify, notifyError, useAction, useLoad } from "./kit.tsx";
import { KindIcon, type Label, type MediaObject } from "./media.tsx";
import { SimilarSection } from "./similar.tsx";

interface CategoryNode extends Label {
  parentId: string | null;
  children: CategoryNode[];
}

/** The category tree flattened for a <select>, with depth for indentation. */
export function flattenCategories<T extends { children: T[] }>(nodes: T[], depth = 0): { node: T; depth: number }[] {
  return nodes.flatMap((n) => [{ node: n, depth }, ...flattenCategories(n.children, depth + 1)]);
}

/** One object: preview, links, facts, metadata, tags, categories, derivatives, delete. */
export function DetailPanel(props: { id: string; onClose: () => void; onChanged: (o: MediaObject) => void; onDeleted: (id: string) => void; onView?: () => void }) {
  const loaded = useLoad(() => call<MediaObject>("media_get", { id: props.id }), [props.id]);
  const o = loaded.data;
  const update = (next: MediaObject) => {
    loaded.set(next);
    props.onChanged(next);
  };
  // While its thumbnail is being made, look again every few seconds.
  useEffect(() => {
    if (o?.thumbnail?.state !== "pending") return;
    const t = setTimeout(loaded.reload, 2500);
    return () => clearTimeout(t);
  }, [o?.thumbnail?.state, o?.updatedAt, loaded.loading]);

  return (
    <aside class="detail" aria-labelledby="detail-title">
      <header class="detail-head">
        <h2 id="detail-title">{o ? o.fileName : "Object"}</h2>
        <button type="button" class="icon-button" aria-label="Close details" onClick={props.onClose}>
          ×
        </button>
      </header>
      <ErrorNote error={loaded.error} />
      {!o ? (
        <Loading />
      ) : (
        <div class="detail-body">
          <Preview object={o} />
          {props.onView && (
            <button type="button" class="primary viewer-open" onClick={props.onView}>
              View full size
            </button>
          )}
          <Links object={o} onDeleted={props.onDeleted} />
          <Facts object={o} />
          <SimilarSection object={o} />
          <TagsEditor object={o} onChange={(tags) => update({ ...o, tags })} />
          <CategoriesEditor object={o} onChange={(categories) => update({ ...o, categories })} />
          <MetadataEditor object={o} onSaved={update} />
          <Info info={o.info} />
          <Derivatives object={o} />
        </div>
      )}
    </aside>
  );
}

function Preview({ object }: { object: MediaObject }) {
  const t = object.thumbnail;
  const [url, setUrl] = useState<string | null>(null);
  const [stream, setStream] = useState<string | null>(null);
  useEffect(() => {
    setUrl(null);
    setStream(null);
    if (t?.state === "ready" && t.etag) void thumbnail(object.id, t.etag).then(setUrl);
  }, [object.id, t?.etag, t?.state]);
  const [play, playing] = useAction(async () => setStream((await call<{ url: string }>("media_stream", { id: object.id })).url));
  const playable = object.kind === "video" || object.kind === "audio";
  return (
    <figure class="preview">
      {stream && object.kind === "video" ? (
        <video src={stream} controls autoPlay class="preview-media" />
      ) : stream && object.kind === "audio" ? (
        <audio src={stream} controls autoPlay class="preview-audio" />
      ) : url ? (
        <img src={url} alt={`Thumbnail of ${object.fileName}`} class="preview-img" />
      ) : (
        <div class="preview-icon">
          <KindIcon kind={object.kind} size={64} />
          <span class="muted">{t?.state === "pending" ? "Thumbnail being made…" : t?.state === "failed" ? "No thumbnail could be made" : `No thumbnail for ${object.kind} files`}</span>
        </div>
      )}
      {playable && !stream && can("media_stream") && (
        <button type="button" class="small" disabled={playing} onClick={() => play()}>
          Play {object.kind}
        </button>
      )}
    </figure>
  );
}

function Links({ object, onDeleted }: { object: MediaObject; onDeleted: (id: string) => void }) {
  const [streamUrl, setStreamUrl] = useState<string | null>(null);
  const [download, downloading] = useAction(async () => {
    const r = await call<{ url: string }>("presign_download", { objectId: object.id });
    const a = document.createElement("a");
    a.href = r.url;
    a.download = object.fileName;
    a.rel = "noopener";
    document.body.append(a);
    a.click();
    a.remove();
  });
  const [stream, streaming] = useAction(async () => setStreamUrl((await call<{ url: string }>("media_stream", { id: object.id })).url));
  return (
    <section class="detail-section" aria-label="Links">
      <div class="actions left">
        {can("presign_download") && (
          <button type="button" disabled={downloading} onClick={() => download()}>
            Download
          </button>
        )}
        {can("media_stream") && (
          <button type="button" disabled={streaming} onClick={() => stream()}>
            Stream link
          </button>
        )}
        {can("media_delete") && (
          <ConfirmButton
            label="Delete"
            ariaLabel={`Delete ${object.fileName}`}
            question={`Delete ${object.fileName}?`}
            detail={<p>It disappears from lists and search at once and stops counting towards storage. Its bytes are purged after 7 days.</p>}
            onConfirm={async () => {
              await call("media_delete", { id: object.id });
              // The page offers Undo (a restore from the trash) in its place of a plain note.
              onDeleted(object.id);
            }}
          />
        )}
      </div>
      {streamUrl && (
        <p class="stream-link">
          <a href={streamUrl} target="_blank" rel="noopener noreferrer">
            Open the stream URL
          </a>{" "}
          (valid for an hour) <CopyButton text={streamUrl} label="Copy URL" />
        </p>
      )}
      <p class="hint">Download and stream URLs count the object's size as egress when they are issued.</p>
    </section>
  );
}

function Facts({ object }: { object: MediaObject }) {
  return (
    <section class="detail-section" aria-label="Object">
      <dl class="facts">
        <dt>Key</dt>
        <dd class="mono break">{object.key}</dd>
        <dt>Id</dt>
        <dd class="mono">
          {object.id} <CopyButton text={object.id} />
        </dd>
        <dt>Size</dt>
        <dd>{bytes(object.size)}</dd>
        <dt>Type</dt>
        <dd>
          {object.contentType} ({object.kind})
        </dd>
        <dt>Created</dt>
        <dd>{date(object.createdAt)}</dd>
        <dt>Updated</dt>
        <dd>{date(object.updatedAt)}</dd>
      </dl>
    </section>
  );
}

function Info({ info }: { info: Record<string, unknown> }) {
  const entries = Object.entries(info);
  const { exif, ...rest } = info as Record<string, unknown> & { exif?: Record<string, unknown> };
  const shown: [string, string][] = [];
  if (typeof rest.width === "number" && typeof rest.height === "number") shown.push(["Dimensions", `${rest.width} × ${rest.height}`]);
  const d = duration(rest.duration);
  if (d) shown.push(["Duration", d]);
  for (const [k, v] of Object.entries(rest)) {
    if (["width", "height", "duration"].includes(k)) continue;
    shown.push([k, typeof v === "object" ? JSON.stringify(v) : String(v)]);
  }
  return (
    <section class="detail-section">
      <h3>Extracted info</h3>
      {entries.length === 0 ? (
        <p class="muted">Nothing extracted (yet).</p>
      ) : (
        <dl class="facts">
          {shown.map(([k, v]) => [<dt key={`${k}-t`}>{k}</dt>, <dd key={`${k}-d`}>{v}</dd>])}
        </dl>
      )}
      {exif && typeof exif === "object" && (
        <details>
          <summary>EXIF ({Object.keys(exif).length})</summary>
          <dl class="facts small-text">
            {Object.entries(exif).map(([k, v]) => [<dt key={`${k}-t`}>{k}</dt>, <dd key={`${k}-d`}>{typeof v === "object" ? JSON.stringify(v) : String(v)}</dd>])}
          </dl>
        </details>
      )}
    </section>
  );
}

function Derivatives({ object }: { object: MediaObject }) {
  const t = object.thumbnail;
  const [storyboard, setStoryboard] = useState("");
  const boards = useLoad(
    () => (can("storyboards_add_clip") ? call<{ data: { id: string; name: string }[] }>("storyboards_list", { limit: 200 }).then((r) => r.data) : Promise.resolve([])),
    [],
  );
  const [makeSet, making] = useAction(async () => {
    const set = await call<{ id: string }>("sets_create", { name: `${object.fileName} renditions`, baseObjectId: object.id });
    navigate(`/sets/${set.id}`);
  });
  const [addClip, adding] = useAction(async () => {
    if (!storyboard) return;
    await call("storyboards_add_clip", { id: storyboard, objectId: object.id });
    notify("Added to the storyboard");
  });
  return (
    <section class="detail-section">
      <h3>Derivatives</h3>
      <p>
        Thumbnail: <strong>{t ? t.state : "none"}</strong>
        {t?.width ? ` · ${t.width} × ${t.height} ${t.contentType ?? ""}` : ""}
      </p>
      <div class="actions left">
        {can("sets_create") && (
          <button type="button" disabled={making} onClick={() => makeSet()}>
            Make a set of renditions
          </button>
        )}
      </div>
      {can("storyboards_add_clip") && (boards.data?.length ?? 0) > 0 && (
        <form
          class="inline-form compact"
          onSubmit={(e) => {
            e.preventDefault();
            void addClip();
          }}
        >
          <label class="field">
            <span class="field-label">Add to storyboard</span>
            <select value={storyboard} onChange={(e) => setStoryboard((e.target as HTMLSelectElement).value)}>
              <option value="">Choose…</option>
              {boards.data!.map((b) => (
                <option key={b.id} value={b.id}>
                  {b.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={adding || !storyboard}>
            Add clip
          </button>
        </form>
      )}
    </section>
  );
}

function TagsEditor({ object, onChange }: { object: MediaObject; onChange: (tags: Label[]) => void }) {
  const editable = can("objects_set_tags");
  const [text, setText] = useState("");
  const known = useLoad(() => call<{ data: Label[] }>("tags_list", { limit: 200 }).then((r) => r.data), [object.id]);
  const save = async (ids: string[]) => {
    const r = await call<{ tags: Label[] }>("objects_set_tags", { id: object.id, tagIds: ids });
    onChange(r.tags);
  };
  const [add, adding] = useAction(async () => {
    const name = text.trim();
    if (!name) return;
    let tag = known.data?.find((t) => t.name.toLowerCase() === name.toLowerCase() || t.slug === name.toLowerCase());
    if (!tag) {
      if (!can("tags_create")) throw new Error(`There is no tag named ${name}, and this credential cannot create tags`);
      tag = await call<Label>("tags_create", { name });
      known.reload();
    }
    if (!object.tags.some((t) => t.id === tag!.id)) await save([...object.tags.map((t) => t.id), tag.id]);
    setText("");
  });
  const listId = `tags-${object.id}`;
  return (
    <section class="detail-section">
      <h3>Tags</h3>
      <div class="chips">
        {object.tags.length === 0 && <span class="muted">No tags.</span>}
        {object.tags.map((t) => (
          <Chip key={t.id} onRemove={editable ? () => void save(object.tags.filter((x) => x.id !== t.id).map((x) => x.id)).catch(notifyError) : undefined} removeLabel={`Remove tag ${t.name}`}>
            {t.name}
          </Chip>
        ))}
      </div>
      {editable && (
        <form
          class="inline-form compact"
          onSubmit={(e) => {
            e.preventDefault();
            void add();
          }}
        >
          <label class="field">
            <span class="field-label">Add a tag</span>
            <input list={listId} value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} placeholder="sunset" />
            <datalist id={listId}>
              {known.data?.map((t) => (
                <option key={t.id} value={t.name} />
              ))}
            </datalist>
          </label>
          <button type="submit" disabled={adding}>
            Add tag
          </button>
        </form>
      )}
    </section>
  );
}

function CategoriesEditor({ object, onChange }: { object: MediaObject; onChange: (c: Label[]) => void }) {
  const editable = can("objects_set_categories");
  const tree = useLoad(() => call<{ data: CategoryNode[] }>("categories_list").then((r) => flattenCategories(r.data)), [object.id]);
  const [choice, setChoice] = useState("");
  const save = async (ids: string[]) => {
    const r = await call<{ categories: Label[] }>("objects_set_categories", { id: object.id, categoryIds: ids });
    onChange(r.categories);
  };
  return (
    <section class="detail-section">
      <h3>Categories</h3>
      <div class="chips">
        {object.categories.length === 0 && <span class="muted">In no category.</span>}
        {object.categories.map((c) => (
          <Chip key={c.id} onRemove={editable ? () => void save(object.categories.filter((x) => x.id !== c.id).map((x) => x.id)).catch(notifyError) : undefined} removeLabel={`Remove from ${c.name}`}>
            {c.name}
          </Chip>
        ))}
      </div>
      {editable && (tree.data?.length ?? 0) > 0 && (
        <form
          class="inline-form compact"
          onSubmit={(e) => {
            e.preventDefault();
            if (choice && !object.categories.some((c) => c.id === choice)) void save([...object.categories.map((c) => c.id), choice]).catch(notifyError);
            setChoice("");
          }}
        >
          <label class="field">
            <span class="field-label">Add to category</span>
            <select value={choice} onChange={(e) => setChoice((e.target as HTMLSelectElement).value)}>
              <option value="">Choose…</option>
              {tree.data!.map(({ node, depth }) => (
                <option key={node.id} value={node.id}>
                  {"  ".repeat(depth)}
                  {depth > 0 ? "└ " : ""}
                  {node.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={!choice}>
            Add
          </button>
        </form>
      )}
    </section>
  );
}

type MetaType = "string" | "number" | "boolean" | "null";
interface MetaRow {
  key: string;
  type: MetaType;
  value: string;
}

function rowsOf(metadata: MediaObject["metadata"]): MetaRow[] {
  return Object.entries(metadata).map(([key, v]) => ({
    key,
    type: v === null ? "null" : (typeof v as MetaType),
    value: v === null ? "" : String(v),
  }));
}

function MetadataEditor({ object, onSaved }: { object: MediaObject; onSaved: (o: MediaObject) => void }) {
  const editable = can("media_update_metadata");
  const [rows, setRows] = useState<MetaRow[]>(rowsOf(object.metadata));
  const [error, setError] = useState<unknown>(null);
  useEffect(() => setRows(rowsOf(object.metadata)), [object.id, object.updatedAt]);
  const [save, saving] = useAction(async () => {
    setError(null);
    const metadata: MediaObject["metadata"] = {};
    for (const r of rows) {
      if (!r.key.trim()) continue;
      if (r.type === "number") {
        const n = Number(r.value);
        if (r.value.trim() === "" || !Number.isFinite(n)) return setError(new Error(`${r.key}: not a number`));
        metadata[r.key.trim()] = n;
      } else if (r.type === "boolean") {
        // Never a silent false: a new yes/no entry starts unanswered and must be answered.
        if (r.value !== "true" && r.value !== "false") return setError(new Error(`${r.key}: choose yes or no`));
        metadata[r.key.trim()] = r.value === "true";
      }
      else if (r.type === "null") metadata[r.key.trim()] = null;
      else metadata[r.key.trim()] = r.value;
    }
    try {
      onSaved(await call<MediaObject>("media_update_metadata", { id: object.id, metadata }));
      notify("Metadata saved");
    } catch (err) {
      setError(err);
    }
  });
  const set = (i: number, patch: Partial<MetaRow>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  if (!editable) {
    return (
      <section class="detail-section">
        <h3>Metadata</h3>
        {rows.length === 0 ? <p class="muted">No metadata.</p> : <dl class="facts">{rows.map((r) => [<dt key={`${r.key}-t`}>{r.key}</dt>, <dd key={`${r.key}-d`}>{r.type === "null" ? "null" : r.value}</dd>])}</dl>}
      </section>
    );
  }
  return (
    <section class="detail-section">
      <h3>Metadata</h3>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        {rows.length === 0 && <p class="muted">No metadata.</p>}
        {rows.map((r, i) => (
          <fieldset key={i} class="meta-row">
            <legend class="visually-hidden">Entry {i + 1}</legend>
            <input aria-label="Key" placeholder="key" value={r.key} onInput={(e) => set(i, { key: (e.target as HTMLInputElement).value })} />
            <select aria-label="Type" value={r.type} onChange={(e) => set(i, { type: (e.target as HTMLSelectElement).value as MetaType, value: "" })}>
              <option value="string">text</option>
              <option value="number">number</option>
              <option value="boolean">yes/no</option>
              <option value="null">null</option>
            </select>
            {r.type === "boolean" ? (
              <select aria-label="Value" value={r.value} onChange={(e) => set(i, { value: (e.target as HTMLSelectElement).value })}>
                <option value="" disabled>
                  choose…
                </option>
                <option value="true">yes</option>
                <option value="false">no</option>
              </select>
            ) : (
              <input aria-label="Value" placeholder="value" disabled={r.type === "null"} value={r.value} onInput={(e) => set(i, { value: (e.target as HTMLInputElement).value })} />
            )}
            <button type="button" class="icon-button" aria-label={`Remove ${r.key || "entry"}`} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
              ×
            </button>
          </fieldset>
        ))}
        <ErrorNote error={error} />
        <div class="actions left">
          <button type="button" class="small" onClick={() => setRows([...rows, { key: "", type: "string", value: "" }])}>
            Add entry
          </button>
          <button type="submit" class="small primary" disabled={saving}>
            Save metadata
          </button>
        </div>
      </form>
    </section>
  );
}
