import { useEffect, useState } from "preact/hooks";
import { call, can } from "../api.ts";
import { date } from "../format.ts";
import { navigate } from "../router.ts";
import { ConfirmButton, Empty, ErrorNote, Field, Link, Listed, Loading, notify, PageHead, useAction, useLoad, useSubmit } from "../ui/kit.tsx";
import { ObjectThumb } from "../ui/object-thumb.tsx";

interface SetItem {
  id: string;
  objectId: string | null;
  objectDeleted: boolean;
  source: string;
  aspectRatio: string;
  width: number;
  height: number;
  role: string;
  renderError: string | null;
}
interface MediaSet {
  id: string;
  name: string;
  bucketId: string;
  baseObjectId: string;
  baseObjectDeleted: boolean;
  itemCount: number;
  generateRequestedAt: string | null;
  createdAt: string;
  updatedAt: string;
  items?: SetItem[];
}

export function SetsPage() {
  const list = useLoad(() => call<{ data: MediaSet[] }>("sets_list", { limit: 200 }), []);
  const [name, setName] = useState("");
  const [base, setBase] = useState("");
  const [create, error] = useSubmit(async () => {
    const s = await call<MediaSet>("sets_create", { name: name.trim(), baseObjectId: base.trim() });
    navigate(`/sets/${s.id}`);
  });
  return (
    <>
      <PageHead title="Sets" sub="Renditions of one base object: sizes and aspect ratios for each use." />
      {can("sets_create") && (
        <form class="card inline-form" onSubmit={create} aria-label="Create a set">
          <Field label="Name">
            <input value={name} required onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="Homepage hero" />
          </Field>
          <Field label="Base object id" hint="From an object's detail panel (or use “Make a set of renditions” there)">
            <input value={base} required class="mono" onInput={(e) => setBase((e.target as HTMLInputElement).value)} placeholder="00000000-0000-…" />
          </Field>
          <button type="submit" class="primary">
            Create set
          </button>
          <ErrorNote error={error} />
        </form>
      )}
      <Listed rows={list.data?.data} error={list.error} empty="No sets yet.">
        {(rows) => (
        <ul class="card-list">
          {rows.map((s) => (
            <li key={s.id} class="card row-card">
              <ObjectThumb id={s.baseObjectId} deleted={s.baseObjectDeleted} caption={false} />
              <div>
                <Link to={`/sets/${s.id}`}>{s.name}</Link>
                <div class="muted small-text">
                  {s.itemCount} items · created {date(s.createdAt)}
                </div>
              </div>
            </li>
          ))}
        </ul>
        )}
      </Listed>
    </>
  );
}

const PRESETS = [
  { role: "thumbnail", aspectRatio: "1:1", width: 256, height: 256 },
  { role: "hero", aspectRatio: "16:9", width: 1280, height: 720 },
  { role: "social", aspectRatio: "1200:630", width: 1200, height: 630 },
  { role: "portrait", aspectRatio: "4:5", width: 800, height: 1000 },
];

export function SetPage({ params }: { params: string[] }) {
  const id = params[0]!;
  const set = useLoad(() => call<MediaSet>("sets_get", { id }), [id]);
  const s = set.data;
  const waiting = s?.items?.some((i) => i.source === "generated" && i.objectId === null && i.renderError === null) && s.generateRequestedAt !== null;
  // While renditions are being made, look again every two seconds: they appear as they finish.
  useEffect(() => {
    if (!waiting) return;
    const t = setTimeout(set.reload, 2000);
    return () => clearTimeout(t);
  }, [waiting, s?.updatedAt, set.loading]);
  const [item, setItem] = useState(PRESETS[0]!);
  const [generate, generating] = useAction(async () => {
    const r = await call<{ items: number }>("sets_generate", { id });
    // The form's note was about an earlier try: once something succeeds it no longer applies.
    clearAddError();
    notify(`Rendering ${r.items} renditions`);
    set.reload();
  });
  const [add, error, clearAddError] = useSubmit(async () => {
    await call("sets_add_item", { id, ...item });
    set.reload();
  });
  if (!s) return set.error ? <ErrorNote error={set.error} /> : <Loading />;
  return (
    <>
      <PageHead title={s.name} sub={<><Link to="/sets">Sets</Link> / {s.name}</>}>
        {can("sets_generate") && (
          <button type="button" class="primary" disabled={generating || s.baseObjectDeleted} onClick={() => generate()}>
            Generate renditions
          </button>
        )}
        {can("sets_delete") && (
          <ConfirmButton
            label="Delete set"
            question={`Delete set ${s.name}?`}
            detail={<p>The set and its items go; the media objects are kept.</p>}
            onConfirm={async () => {
              await call("sets_delete", { id });
              navigate("/sets");
            }}
          />
        )}
      </PageHead>
      <ErrorNote error={set.error} />
      <section class="card set-base">
        <h2>Base object</h2>
        <ObjectThumb id={s.baseObjectId} deleted={s.baseObjectDeleted} />
        {waiting && (
          <p class="note" role="status">
            <span class="spinner" aria-hidden="true" /> Rendering… renditions appear here as they are made.
          </p>
        )}
      </section>
      <section class="card">
        <h2>Renditions</h2>
        {(s.items?.length ?? 0) === 0 ? (
          <p class="muted">No items yet. Add the sizes you need, then generate.</p>
        ) : (
          <ul class="rendition-grid">
            {s.items!.map((i) => (
              <li key={i.id} class="rendition">
                {/* Its own shape (16:9, 3:1...), not a square crop: the width and height set the box. */}
                <span class="rendition-pic" style={{ aspectRatio: `${i.width} / ${i.height}` }}>
                  {i.objectId ? <ObjectThumb id={i.objectId} deleted={i.objectDeleted} caption={false} /> : <span class="tile-pic placeholder">{i.renderError ? "failed" : s.generateRequestedAt ? "rendering…" : "not generated"}</span>}
                </span>
                <div>
                  <strong>{i.role}</strong> {i.aspectRatio} · {i.width}×{i.height}
                  <div class="muted small-text">{i.source}</div>
                  {i.renderError && <div class="error-note small-text">Not rendered: {i.renderError}</div>}
                </div>
                {i.objectId && !i.objectDeleted && <RenditionLinks objectId={i.objectId} bucketId={s.bucketId} label={`${i.role} ${i.width}×${i.height}`} />}
                {can("sets_remove_item") && (
                  <ConfirmButton
                    class="small danger"
                    label="Remove"
                    ariaLabel={`Remove ${i.role} ${i.width}×${i.height}`}
                    question="Remove this item?"
                    onConfirm={async () => {
                      await call("sets_remove_item", { id, itemId: i.id });
                      clearAddError();
                      set.reload();
                    }}
                  />
                )}
              </li>
            ))}
          </ul>
        )}
        {can("sets_add_item") && (
          <form class="inline-form" onSubmit={add} aria-label="Add a rendition">
            <Field label="Preset">
              <select
                value={item.role}
                onChange={(e) => setItem(PRESETS.find((p) => p.role === (e.target as HTMLSelectElement).value) ?? item)}
              >
                {PRESETS.map((p) => (
                  <option key={p.role} value={p.role}>
                    {p.role} ({p.width}×{p.height})
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Role">
              <input value={item.role} onInput={(e) => setItem({ ...item, role: (e.target as HTMLInputElement).value })} />
            </Field>
            <Field label="Aspect ratio">
              <input value={item.aspectRatio} onInput={(e) => setItem({ ...item, aspectRatio: (e.target as HTMLInputElement).value })} />
            </Field>
            <Field label="Width">
              <input type="number" min={1} value={item.width} onInput={(e) => setItem({ ...item, width: Number((e.target as HTMLInputElement).value) })} />
            </Field>
            <Field label="Height">
              <input type="number" min={1} value={item.height} onInput={(e) => setItem({ ...item, height: Number((e.target as HTMLInputElement).value) })} />
            </Field>
            <button type="submit">Add item</button>
            <ErrorNote error={error} />
          </form>
        )}
      </section>
    </>
  );
}

/** A rendition is an object of the bucket: open it there (its detail panel) or download it. */
function RenditionLinks({ objectId, bucketId, label }: { objectId: string; bucketId: string; label: string }) {
  const [download, downloading] = useAction(async () => {
    const r = await call<{ url: string }>("presign_download", { objectId });
    const a = document.createElement("a");
    a.href = r.url;
    a.rel = "noopener";
    document.body.append(a);
    a.click();
    a.remove();
  });
  return (
    <div class="row-actions rendition-links">
      <Link to={`/buckets/${bucketId}?object=${objectId}`} class="button small" aria-label={`Open ${label}`}>
        Open
      </Link>
      {can("presign_download") && (
        <button type="button" class="small" disabled={downloading} aria-label={`Download ${label}`} onClick={() => download()}>
          Download
        </button>
      )}
    </div>
  );
}
