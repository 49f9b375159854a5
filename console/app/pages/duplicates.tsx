import { useEffect, useRef, useState } from "preact/hooks";
import { call, can } from "../api.ts";
import { bytes, plural } from "../format.ts";
import { location, setQuery } from "../router.ts";
import { ConfirmButton, Empty, ErrorNote, Field, Link, Loading, PageHead, useLoad } from "../ui/kit.tsx";
import { KindIcon, type MediaObject, Thumb } from "../ui/media.tsx";
import { offerUndo, UndoToast } from "../ui/undo.tsx";

/** One picture of a group, as media_duplicates names it. */
interface Member {
  id: string;
  key: string;
  size: number;
}

/** Near-identical pictures: `objects` largest first; `reclaimable` is what keeping only the first frees. */
interface Group {
  objects: Member[];
  bytes: number;
  reclaimable: number;
}

interface BulkResult {
  results: { id: string; status: "done" | "not_found" | "refused"; message?: string }[];
  done: number;
  failed: number;
}

/** Groups per page: each member's view is one media_get, so a page stays a few dozen calls. */
const PAGE = 20;
/** The closeness choices (differing bits of the 64-bit picture hash); the tool's default is 4. */
const DISTANCES = [0, 2, 4, 6, 8, 10];
const DEFAULT_DISTANCE = 4;
/** Members' views fetched at once (each is an API call). */
const PARALLEL = 4;

/**
 * A bucket's near-duplicate pictures (media_duplicates), the groups that free the most first:
 * each member's thumbnail, key and size. "Keep the largest" moves the rest of a group (or of
 * every group shown) to the trash through objects_bulk_delete, after a confirmation that says
 * how many and how much; members picked one by one go the same way. Undo restores them.
 */
export function DuplicatesPage({ params }: { params: string[] }) {
  const bucketId = params[0]!;
  const q = location.value.query;
  const asked = Number(q.get("distance") ?? DEFAULT_DISTANCE);
  const distance = Number.isInteger(asked) && asked >= 0 && asked <= 10 ? asked : DEFAULT_DISTANCE;
  const offset = Math.max(0, Math.floor(Number(q.get("offset") ?? 0)) || 0);
  const bucket = useLoad(() => call<{ id: string; name: string }>("buckets_get", { id: bucketId }), [bucketId]);
  const list = useLoad(
    () => call<{ data: Group[]; total: number; hasMore: boolean }>("media_duplicates", { id: bucketId, maxDistance: distance, limit: PAGE, offset }),
    [bucketId, distance, offset],
  );
  const groups = list.data?.data;
  const views = useViews(groups?.flatMap((g) => g.objects.map((o) => o.id)) ?? []);
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const refocus = useRef(false);
  const mayDelete = can("objects_bulk_delete");

  // A page emptied by the last action shows the one before it.
  useEffect(() => {
    if (list.data && list.data.data.length === 0 && offset > 0) setQuery({ offset: String(Math.max(0, offset - PAGE)) });
  }, [list.data]);
  // What was picked and is gone from the listing is no longer picked.
  useEffect(() => {
    if (!groups) return;
    const shown = new Set(groups.flatMap((g) => g.objects.map((o) => o.id)));
    if ([...picked].some((id) => !shown.has(id))) setPicked(new Set([...picked].filter((id) => shown.has(id))));
    // The buttons of a group that left took focus with them: back to the page's heading.
    if (refocus.current) {
      refocus.current = false;
      if (!document.activeElement || document.activeElement === document.body || !document.activeElement.isConnected) document.querySelector<HTMLElement>("main h1")?.focus();
    }
  }, [groups]);

  const trash = async (ids: string[]) => {
    const gone: string[] = [];
    let failed = 0;
    for (let i = 0; i < ids.length; i += 1000) {
      const r = await call<BulkResult>("objects_bulk_delete", { ids: ids.slice(i, i + 1000) });
      gone.push(...r.results.filter((x) => x.status === "done").map((x) => x.id));
      failed += r.failed;
    }
    setPicked(new Set());
    refocus.current = true;
    list.reload();
    offerUndo(`${plural(gone.length, "object")} moved to the trash${failed > 0 ? `; ${failed} not (gone meanwhile)` : ""}.`, async () => {
      for (const id of gone) await call("trash_restore", { id });
    });
  };

  const toggle = (id: string) => {
    const next = new Set(picked);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setPicked(next);
  };

  const total = list.data?.total ?? 0;
  const shown = groups ?? [];
  const extras = shown.flatMap((g) => g.objects.slice(1));
  const freed = shown.reduce((n, g) => n + g.reclaimable, 0);
  const pickedMembers = shown.flatMap((g) => g.objects.filter((o) => picked.has(o.id)));
  const emptied = shown.filter((g) => g.objects.every((o) => picked.has(o.id))).length;
  const name = bucket.data?.name ?? "Bucket";

  return (
    <div class="duplicates-page">
      <PageHead
        title="Duplicates"
        sub={
          <>
            <Link to="/buckets">Buckets</Link> / <Link to={`/buckets/${bucketId}`}>{name}</Link> · near-identical pictures, the groups that free the most first
          </>
        }
      />
      <ErrorNote error={bucket.error} />
      <div class="filters">
        <Field label="How alike" hint="Differing bits of 64 in the picture hash">
          <select value={String(distance)} onChange={(e) => setQuery({ distance: (e.target as HTMLSelectElement).value, offset: null })}>
            {DISTANCES.map((d) => (
              <option key={d} value={String(d)}>
                {d === 0 ? "The same picture (0 bits)" : `Up to ${d} bits apart${d === DEFAULT_DISTANCE ? " (default)" : ""}`}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNote error={list.error} />
      {!list.data ? (
        <Loading what="Looking for duplicates" />
      ) : total === 0 ? (
        <Empty>
          No duplicates in {name}. Pictures are compared once their thumbnails are made; a looser setting above finds less alike ones.
        </Empty>
      ) : (
        <>
          <section class="bulk-bar card" aria-label="Duplicate groups shown" style={{ display: "grid", gap: "0.5rem" }}>
            <p class="bulk-count" style={{ margin: 0 }}>
              <strong>{plural(total, "group")}</strong>
              {total > shown.length && <span class="muted">showing {offset + 1}–{offset + shown.length}</span>}
              <span>
                Keeping the largest of each group shown frees <strong>{bytes(freed)}</strong> ({plural(extras.length, "object")}).
              </span>
            </p>
            {mayDelete && (shown.length > 1 || pickedMembers.length > 0) && (
              <div class="bulk-actions">
                {/* One group shown: its own button says the same. */}
                {shown.length > 1 && (
                  <ConfirmButton
                    label="Keep the largest of each, trash the rest"
                    ariaLabel={`Keep the largest of each, trash the rest (${shown.length} groups shown)`}
                    class="danger small"
                    disabled={extras.length === 0 || list.loading}
                    question={`Move ${plural(extras.length, "object")} to the trash?`}
                    detail={
                      <p>
                        The largest picture of each of the {plural(shown.length, "group")} shown stays; the other {plural(extras.length, "object")} go to the trash, freeing {bytes(freed)}. The
                        trash keeps them for 7 days, and Undo brings them back.
                      </p>
                    }
                    confirmLabel={`Move ${plural(extras.length, "object")} to trash`}
                    onConfirm={() => trash(extras.map((o) => o.id))}
                  />
                )}
                {pickedMembers.length > 0 && (
                  <>
                    <ConfirmButton
                      label={`Move ${plural(pickedMembers.length, "selected picture")} to Trash`}
                      class="danger small"
                      disabled={list.loading}
                      question={`Move ${plural(pickedMembers.length, "object")} to the trash?`}
                      detail={
                        <>
                          <p>
                            The {plural(pickedMembers.length, "selected picture")} go to the trash, freeing {bytes(pickedMembers.reduce((n, o) => n + o.size, 0))}. The trash keeps them for 7
                            days, and Undo brings them back.
                          </p>
                          {emptied > 0 && <p class="warn-note">Every copy of {plural(emptied, "group")} is selected: none of those pictures stays.</p>}
                        </>
                      }
                      confirmLabel={`Move ${plural(pickedMembers.length, "object")} to trash`}
                      onConfirm={() => trash(pickedMembers.map((o) => o.id))}
                    />
                    <button type="button" class="small" onClick={() => setPicked(new Set())}>
                      Clear selection
                    </button>
                  </>
                )}
              </div>
            )}
          </section>
          <ol class="duplicate-groups" style={{ listStyle: "none", padding: 0, margin: 0, display: "grid", gap: "1rem" }}>
            {shown.map((g, i) => (
              <li key={g.objects[0]!.id}>
                <GroupCard
                  group={g}
                  number={offset + i + 1}
                  bucketId={bucketId}
                  views={views}
                  picked={picked}
                  onToggle={mayDelete ? toggle : null}
                  onKeepLargest={mayDelete && !list.loading ? () => trash(g.objects.slice(1).map((o) => o.id)) : null}
                />
              </li>
            ))}
          </ol>
          {total > PAGE && (
            <nav aria-label="Pages of groups" class="actions left" style={{ alignItems: "center" }}>
              <button type="button" class="small" disabled={offset === 0} onClick={() => setQuery({ offset: offset - PAGE > 0 ? String(offset - PAGE) : null })}>
                Previous
              </button>
              <span class="muted">
                {offset + 1}–{offset + shown.length} of {total.toLocaleString()}
              </span>
              <button type="button" class="small" disabled={!list.data.hasMore} onClick={() => setQuery({ offset: String(offset + PAGE) })}>
                Next
              </button>
            </nav>
          )}
        </>
      )}
      <UndoToast onUndone={() => list.reload()} />
    </div>
  );
}

function GroupCard(props: {
  group: Group;
  number: number;
  bucketId: string;
  views: ReadonlyMap<string, MediaObject | null>;
  picked: ReadonlySet<string>;
  onToggle: ((id: string) => void) | null;
  onKeepLargest: (() => Promise<void>) | null;
}) {
  const { group: g, number } = props;
  const rest = g.objects.length - 1;
  const headingId = `group-${number}`;
  return (
    <article class="card duplicate-group" aria-labelledby={headingId} style={{ margin: 0, display: "grid", gap: "0.75rem" }}>
      <header style={{ display: "flex", flexWrap: "wrap", gap: "0.5rem 1rem", alignItems: "center", justifyContent: "space-between" }}>
        <div style={{ minWidth: 0 }}>
          <h2 id={headingId} style={{ margin: 0, fontSize: "1.05rem" }}>
            Group {number}: {plural(g.objects.length, "picture")}
          </h2>
          <p class="muted" style={{ margin: "0.15rem 0 0" }}>
            {bytes(g.bytes)} in all; keeping the largest frees {bytes(g.reclaimable)}
          </p>
        </div>
        {props.onKeepLargest && (
          <ConfirmButton
            label="Keep the largest, move the rest to Trash"
            class="danger small"
            ariaLabel={`Group ${number}: keep the largest, move the rest to Trash`}
            question={`Move ${plural(rest, "object")} to the trash?`}
            detail={
              <p>
                {g.objects[0]!.key} ({bytes(g.objects[0]!.size)}) stays; the other {plural(rest, "picture")} of this group go to the trash, freeing {bytes(g.reclaimable)}. The trash keeps them
                for 7 days, and Undo brings them back.
              </p>
            }
            confirmLabel={`Move ${plural(rest, "object")} to trash`}
            onConfirm={props.onKeepLargest}
          />
        )}
      </header>
      <ul style={{ listStyle: "none", padding: 0, margin: 0, display: "grid", gridTemplateColumns: "repeat(auto-fill, minmax(8.5rem, 1fr))", gap: "0.75rem" }}>
        {g.objects.map((o, i) => {
          const view = props.views.get(o.id);
          const checked = props.picked.has(o.id);
          return (
            <li key={o.id} data-id={o.id} class={checked ? "duplicate checked" : "duplicate"} style={{ display: "flex", flexDirection: "column", gap: "0.3rem", minWidth: 0, fontSize: "0.85rem" }}>
              <Link to={`/buckets/${props.bucketId}?object=${o.id}`} class="duplicate-pic" aria-label={`Open ${o.key}`}>
                <span class="tile-pic" style={{ borderRadius: "8px", outline: checked ? "3px solid var(--danger)" : undefined }}>
                  {view ? <Thumb object={view} eager /> : <KindIcon kind={view === null ? "other" : "image"} size={28} />}
                </span>
              </Link>
              <span class="break" style={{ overflowWrap: "anywhere" }}>
                {o.key}
              </span>
              <span class="muted">
                {bytes(o.size)}
                {i === 0 ? " · largest, kept" : ""}
              </span>
              {props.onToggle && (
                <label class="check">
                  <input type="checkbox" checked={checked} onChange={() => props.onToggle!(o.id)} />
                  <span>
                    Select<span class="visually-hidden"> {o.key}</span>
                  </span>
                </label>
              )}
            </li>
          );
        })}
      </ul>
    </article>
  );
}

/**
 * The members' own views (media_get, which carries the thumbnail's signed path), a few at a
 * time; a member gone meanwhile is null. Views already fetched are kept across pages and reloads.
 */
function useViews(ids: string[]): ReadonlyMap<string, MediaObject | null> {
  const cache = useRef(new Map<string, MediaObject | null>());
  const asked = useRef(new Set<string>());
  const mounted = useRef(true);
  const [, setVersion] = useState(0);
  useEffect(() => () => void (mounted.current = false), []);
  const key = ids.join(",");
  useEffect(() => {
    const todo = ids.filter((id) => !cache.current.has(id) && !asked.current.has(id));
    for (const id of todo) asked.current.add(id);
    let next = 0;
    const work = async () => {
      while (next < todo.length && mounted.current) {
        const id = todo[next++]!;
        const view = await call<MediaObject>("media_get", { id }).catch(() => null);
        cache.current.set(id, view);
        asked.current.delete(id);
        if (mounted.current) setVersion((v) => v + 1);
      }
    };
    for (let i = 0; i < PARALLEL; i++) void work();
  }, [key]);
  return cache.current;
}
