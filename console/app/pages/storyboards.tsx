import { useState } from "preact/hooks";
import { call, can, me } from "../api.ts";
import { date } from "../format.ts";
import { navigate } from "../router.ts";
import { ConfirmButton, Empty, ErrorNote, Field, Link, Listed, Loading, notify, notifyError, PageHead, useLoad, useSubmit } from "../ui/kit.tsx";
import type { MediaObject } from "../ui/media.tsx";
import { ObjectPicker } from "../ui/object-picker.tsx";
import { ObjectThumb } from "../ui/object-thumb.tsx";

interface Clip {
  id: string;
  objectId: string;
  position: number;
  note: string;
  objectDeleted: boolean;
}
interface Storyboard {
  id: string;
  name: string;
  bucketId: string | null;
  clipCount: number;
  createdAt: string;
  updatedAt: string;
  clips?: Clip[];
}

export function StoryboardsPage() {
  const list = useLoad(() => call<{ data: Storyboard[] }>("storyboards_list", { limit: 200 }), []);
  const buckets = useLoad(() => call<{ data: { id: string; name: string }[] }>("buckets_list", { limit: 200 }).then((r) => r.data), []);
  const restricted = me.value?.credential.bucketId ?? null;
  const [name, setName] = useState("");
  const [bucket, setBucket] = useState(restricted ?? "");
  const [create, error] = useSubmit(async () => {
    const s = await call<Storyboard>("storyboards_create", { name: name.trim(), ...(bucket ? { bucketId: bucket } : {}) });
    navigate(`/storyboards/${s.id}`);
  });
  return (
    <>
      <PageHead title="Storyboards" sub="Clips in order: drag them into place." />
      {can("storyboards_create") && (
        <form class="card inline-form" onSubmit={create} aria-label="Create a storyboard">
          <Field label="Name">
            <input value={name} required onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="Trailer cut" />
          </Field>
          <Field label="Bucket" hint="Binding it lets keys restricted to that bucket use it">
            <select value={bucket} onChange={(e) => setBucket((e.target as HTMLSelectElement).value)} disabled={restricted !== null}>
              {restricted === null && <option value="">(any bucket)</option>}
              {buckets.data?.map((b) => (
                <option key={b.id} value={b.id}>
                  {b.name}
                </option>
              ))}
            </select>
          </Field>
          <button type="submit" class="primary">
            Create storyboard
          </button>
          <ErrorNote error={error} />
        </form>
      )}
      <Listed rows={list.data?.data} error={list.error} empty="No storyboards yet.">
        {(rows) => (
        <ul class="card-list">
          {rows.map((s) => (
            <li key={s.id} class="card row-card">
              <div>
                <Link to={`/storyboards/${s.id}`}>{s.name}</Link>
                <div class="muted small-text">
                  {s.clipCount} clips · updated {date(s.updatedAt)}
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

/** A new order with the clip at `from` moved to `to`. */
function moved<T>(items: T[], from: number, to: number): T[] {
  const next = [...items];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item!);
  return next;
}

export function StoryboardPage({ params }: { params: string[] }) {
  const id = params[0]!;
  const board = useLoad(() => call<Storyboard>("storyboards_get", { id }), [id]);
  const [dragging, setDragging] = useState<number | null>(null);
  const [over, setOver] = useState<number | null>(null);
  const [picked, setPicked] = useState<MediaObject | null>(null);
  const [announce, setAnnounce] = useState("");
  const s = board.data;
  const clips = s?.clips ?? [];
  const canReorder = can("storyboards_reorder_clips");

  const reorder = async (from: number, to: number) => {
    if (!s || from === to || to < 0 || to >= clips.length) return;
    const next = moved(clips, from, to);
    // Shown at once; the answer from the service then replaces it.
    board.set({ ...s, clips: next.map((c, i) => ({ ...c, position: i })) });
    try {
      const saved = await call<Storyboard>("storyboards_reorder_clips", { id, clipIds: next.map((c) => c.id) });
      board.set(saved);
      setAnnounce(`Clip moved to position ${to + 1} of ${next.length}`);
    } catch (err) {
      notifyError(err);
      board.reload();
    }
  };

  const [add, error] = useSubmit(async () => {
    if (!picked) throw new Error("Choose an object to add first.");
    await call("storyboards_add_clip", { id, objectId: picked.id });
    setPicked(null);
    board.reload();
  });

  if (!s) return board.error ? <ErrorNote error={board.error} /> : <Loading />;
  return (
    <>
      <PageHead title={s.name} sub={<><Link to="/storyboards">Storyboards</Link> / {s.name} · {clips.length} clips</>}>
        {can("storyboards_delete") && (
          <ConfirmButton
            label="Delete storyboard"
            question={`Delete storyboard ${s.name}?`}
            detail={<p>The storyboard and its clips go; the media objects are kept.</p>}
            onConfirm={async () => {
              await call("storyboards_delete", { id });
              notify("Storyboard deleted");
              navigate("/storyboards");
            }}
          />
        )}
      </PageHead>
      <p class="visually-hidden" role="status" aria-live="polite">
        {announce}
      </p>
      {clips.length === 0 ? (
        <Empty>No clips yet. Add objects below, or with “Add to storyboard” in an object's detail panel.</Empty>
      ) : (
        <ol class="clips" aria-label="Clips in order">
          {clips.map((c, i) => (
            <li
              key={c.id}
              class={`clip${dragging === i ? " dragging" : ""}${over === i && dragging !== i ? " drop-target" : ""}`}
              data-clip={c.id}
              draggable={canReorder}
              onDragStart={(e) => {
                setDragging(i);
                e.dataTransfer!.effectAllowed = "move";
                e.dataTransfer!.setData("text/plain", c.id);
              }}
              onDragOver={(e) => {
                if (dragging === null) return;
                e.preventDefault();
                setOver(i);
              }}
              onDragEnd={() => {
                setDragging(null);
                setOver(null);
              }}
              onDrop={(e) => {
                e.preventDefault();
                if (dragging !== null) void reorder(dragging, i);
                setDragging(null);
                setOver(null);
              }}
            >
              <span class="clip-pos" aria-hidden="true">
                {i + 1}
              </span>
              <ObjectThumb id={c.objectId} deleted={c.objectDeleted} />
              {c.note && <p class="small-text">{c.note}</p>}
              <div class="clip-actions">
                {canReorder && (
                  <>
                    <button type="button" class="small" disabled={i === 0} onClick={() => reorder(i, i - 1)} aria-label={`Move clip ${i + 1} earlier`}>
                      ←
                    </button>
                    <button type="button" class="small" disabled={i === clips.length - 1} onClick={() => reorder(i, i + 1)} aria-label={`Move clip ${i + 1} later`}>
                      →
                    </button>
                  </>
                )}
                {can("storyboards_remove_clip") && (
                  <button
                    type="button"
                    class="small danger"
                    aria-label={`Remove clip ${i + 1}`}
                    onClick={async () => {
                      try {
                        await call("storyboards_remove_clip", { id, clipId: c.id });
                        board.reload();
                      } catch (err) {
                        notifyError(err);
                      }
                    }}
                  >
                    Remove
                  </button>
                )}
              </div>
            </li>
          ))}
        </ol>
      )}
      {can("storyboards_add_clip") && (
        <form class="card inline-form" onSubmit={add} aria-label="Add a clip">
          <ObjectPicker label="Find an object to add" picked={picked} onPick={setPicked} />
          <button type="submit" disabled={!picked}>
            Add clip
          </button>
          <ErrorNote error={error} />
        </form>
      )}
    </>
  );
}
