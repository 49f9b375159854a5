import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { call, can } from "../api.ts";
import { plural } from "../format.ts";
import { location, setQuery } from "../router.ts";
import { Upload } from "../upload.ts";
import { BulkBar, type BulkFilter } from "../ui/bulk.tsx";
import { flattenCategories, DetailPanel } from "../ui/detail.tsx";
import { Breadcrumbs, FolderList } from "../ui/folders.tsx";
import { Pager, VirtualGrid } from "../ui/grid.tsx";
import { ErrorNote, Field, Link, PageHead, useLoad } from "../ui/kit.tsx";
import type { Label, MediaObject } from "../ui/media.tsx";
import { Selection } from "../ui/selection.ts";
import { offerUndo, UndoToast } from "../ui/undo.tsx";
import { Viewer } from "../ui/viewer.tsx";
import { DropZone, UploadPanel } from "../ui/uploads.tsx";

export const KINDS = ["image", "video", "audio", "pdf", "3d", "other"];

export function MediaPage({ params }: { params: string[] }) {
  const bucketId = params[0]!;
  const q = location.value.query;
  const filters = {
    kind: q.get("kind") ?? "",
    tags: q.get("tag") ?? "",
    categories: q.get("category") ?? "",
    search: q.get("q") ?? "",
    sort: q.get("sort") ?? "created_at",
    order: q.get("order") ?? "desc",
  };
  const selected = q.get("object");
  const viewing = selected !== null && q.get("view") === "1";
  // The open folder (a key prefix ending in "/"). A filter searches the whole bucket instead.
  const folder = q.get("folder") ?? "";
  const flat = Boolean(filters.kind || filters.tags || filters.categories || filters.search);
  const bucket = useLoad(() => call<{ id: string; name: string }>("buckets_get", { id: bucketId }), [bucketId]);
  const tags = useLoad(() => call<{ data: Label[] }>("tags_list", { limit: 200 }).then((r) => r.data), []);
  const categories = useLoad(() => call<{ data: { id: string; name: string; slug: string; children: any[] }[] }>("categories_list").then((r) => flattenCategories(r.data)), []);

  const key = JSON.stringify([filters, folder]);
  const { pager, listing, bulkFilter, selection } = useMemo(() => {
    const chosen: Record<string, string> = {};
    if (filters.kind) chosen.kind = filters.kind;
    if (filters.tags) chosen.tags = filters.tags;
    if (filters.categories) chosen.categories = filters.categories;
    if (filters.search) chosen.search = filters.search;
    const listing: Record<string, unknown> = { bucketId, sort: filters.sort, order: filters.order, ...chosen, ...(flat ? {} : { folder }) };
    // "All of the filter" in a bulk call: the same filters; a folder's listing is named by its ids.
    const bulkFilter: BulkFilter | null = flat ? { bucketId, ...chosen } : null;
    return { pager: new Pager("media_list", listing), listing, bulkFilter, selection: new Selection() };
  }, [bucketId, key]);
  const [selecting, setSelecting] = useState(false);
  const [focusRequest, setFocusRequest] = useState<{ index: number; seq: number } | null>(null);
  const openedIndex = useRef(0);
  selection.ids.value; // re-render when the selection changes
  selection.all.value;
  const openFolder = (prefix: string) => setQuery({ folder: prefix || null, object: null });
  const closeDetail = () => {
    const id = selected;
    setQuery({ object: null, view: null });
    // Back to the tile it was opened from (never <body>).
    requestAnimationFrame(() => {
      const tile = document.querySelector<HTMLElement>(`.grid-sizer [data-id="${id}"]`) ?? document.querySelector<HTMLElement>(`.grid-sizer [data-index="${openedIndex.current}"]`);
      if (tile) tile.focus();
      else document.querySelector<HTMLElement>("h1")?.focus();
    });
  };
  useEffect(() => {
    // The viewer is a modal dialog: its own Escape closes it (and the panel).
    if (!selected || viewing) return;
    const onKey = (e: KeyboardEvent) => {
      // A dialog open over the panel takes its own Escape.
      if (e.key !== "Escape" || e.defaultPrevented || document.querySelector("dialog[open]")) return;
      e.preventDefault();
      closeDetail();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [selected, viewing]);
  // The viewer's previous and next: the neighbours in the listing (loaded ones; the grid loads around what it shows).
  const neighbour = (step: number) => {
    const i = openedIndex.current + step;
    const o = i >= 0 ? pager.get(i) : undefined;
    if (!o) return null;
    return () => {
      openedIndex.current = i;
      pager.ensure(Math.max(0, i - 50), i + 50);
      setQuery({ object: o.id, view: "1" });
    };
  };
  let viewed = selected ? pager.get(openedIndex.current) : undefined;
  if (selected && viewed?.id !== selected) {
    // Opened from a link or a reload: find it among the loaded pages.
    viewed = undefined;
    for (let i = 0; i < (pager.total.value ?? 0); i++) {
      if (pager.get(i)?.id === selected) {
        openedIndex.current = i;
        viewed = pager.get(i);
        break;
      }
    }
  }
  const onTile = (o: MediaObject, index: number, e: MouseEvent | KeyboardEvent) => {
    if (e.shiftKey) return selection.range(index, (i) => pager.get(i)?.id);
    if (e.ctrlKey || e.metaKey || selecting) return selection.toggle(o.id, index);
    selection.clear();
    selection.anchor = index;
    openedIndex.current = index;
    setQuery({ object: o.id });
  };
  const afterDelete = (ids: string[]) => {
    pager.invalidate();
    // Focus moves to the tile that takes the deleted one's place.
    setFocusRequest({ index: openedIndex.current, seq: Date.now() });
    offerUndo(ids.length === 1 ? "Moved to the trash." : `${plural(ids.length, "object")} moved to the trash.`, async () => {
      for (const id of ids) await call("trash_restore", { id });
    });
  };

  // New objects and thumbnails as they arrive: while any object on screen waits for its
  // thumbnail, the pages on screen are fetched again every few seconds.
  const pendingCheck = useRef<number | undefined>(undefined);
  useEffect(() => {
    const tick = () => {
      const shown = pager.loadedIn(0, (pager.total.value ?? 0) - 1);
      if (shown.some((o) => o.thumbnail?.state === "pending")) pager.invalidate();
    };
    pendingCheck.current = window.setInterval(tick, 3000);
    return () => clearInterval(pendingCheck.current);
  }, [pager]);

  const [search, setSearch] = useState(filters.search);
  useEffect(() => setSearch(filters.search), [filters.search]);
  const onUploaded = (_u: Upload) => pager.invalidate();
  const total = pager.total.value;
  const folders = flat ? [] : (pager.folders.value ?? []);
  const canUpload = can("presign_upload");

  return (
    <div class={`media-page${selected ? " with-detail" : ""}`}>
      <div class="media-main">
        <PageHead
          title={bucket.data ? bucket.data.name : "Bucket"}
          sub={
            <>
              <Link to="/buckets">Buckets</Link> / {bucket.data?.name ?? bucketId} · {total === null ? "…" : plural(total, "object")}
            </>
          }
        >
          {can("media_duplicates") && (
            <Link to={`/buckets/${bucketId}/duplicates`} class="button small">
              Duplicates
            </Link>
          )}
        </PageHead>
        <ErrorNote error={bucket.error} />
        {flat ? (
          <p class="hint folder-note">Filtered: objects from every folder of the bucket.</p>
        ) : (
          <Breadcrumbs bucket={bucket.data?.name ?? "Bucket"} folder={folder} onOpen={openFolder} />
        )}
        <form
          class="filters"
          role="search"
          aria-label="Filter objects"
          onSubmit={(e) => {
            e.preventDefault();
            setQuery({ q: search.trim() || null });
          }}
        >
          <Field label="Name contains" hideLabel>
            <input type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} placeholder="Name contains…" />
          </Field>
          <Field label="Kind" hideLabel>
            <select value={filters.kind} onChange={(e) => setQuery({ kind: (e.target as HTMLSelectElement).value })}>
              <option value="">All kinds</option>
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Tag" hideLabel>
            <select value={filters.tags} onChange={(e) => setQuery({ tag: (e.target as HTMLSelectElement).value })}>
              <option value="">Any tag</option>
              {tags.data?.map((t) => (
                <option key={t.id} value={t.slug}>
                  {t.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Category" hideLabel>
            <select value={filters.categories} onChange={(e) => setQuery({ category: (e.target as HTMLSelectElement).value })}>
              <option value="">Any category</option>
              {categories.data?.map(({ node, depth }) => (
                <option key={node.id} value={node.slug}>
                  {" ".repeat(depth * 2)}
                  {node.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Sort" hideLabel>
            <select value={`${filters.sort}:${filters.order}`} onChange={(e) => {
              const [sort, order] = (e.target as HTMLSelectElement).value.split(":");
              setQuery({ sort, order });
            }}>
              <option value="created_at:desc">Newest first</option>
              <option value="created_at:asc">Oldest first</option>
              <option value="key:asc">Name A–Z</option>
              <option value="key:desc">Name Z–A</option>
              <option value="size:desc">Largest first</option>
              <option value="size:asc">Smallest first</option>
            </select>
          </Field>
          <button type="submit">Filter</button>
        </form>
        {canUpload && <UploadPanel bucketId={bucketId} folder={flat ? "" : folder} onUploaded={onUploaded} />}
        <ErrorNote error={pager.error.value} />
        {(total ?? 0) > 0 && (
          <div class="select-bar">
            <button type="button" class="small" aria-pressed={selecting} onClick={() => (setSelecting(!selecting), selecting && selection.clear())}>
              {selecting ? "Done selecting" : "Select"}
            </button>
            <button type="button" class="small" onClick={() => selection.selectAll()} disabled={selection.all.value}>
              Select all {plural(total ?? 0, "object")}
            </button>
            <span class="hint">Shift-click selects a range, Ctrl- or Cmd-click one more.</span>
          </div>
        )}
        <BulkBar
          selection={selection}
          total={total ?? 0}
          filter={bulkFilter}
          listing={listing}
          onChanged={() => pager.invalidate()}
          onDeleted={() => {
            pager.invalidate();
            setFocusRequest({ index: selection.anchor ?? 0, seq: Date.now() });
          }}
        />
        <DropZone bucketId={bucketId} folder={flat ? "" : folder} onUploaded={onUploaded} enabled={canUpload}>
          <FolderList folder={folder} names={folders} onOpen={openFolder} />
          {total === 0 && folders.length > 0 ? null : total === 0 ? (
            <div class="empty">
              {Object.values(filters).some((v, i) => i < 4 && v) ? "No object matches these filters." : canUpload ? "This bucket is empty. Drop files here or choose them above." : "This bucket is empty."}
            </div>
          ) : (
            <VirtualGrid
              pager={pager}
              label={`Objects in ${folder && !flat ? folder : bucket.data?.name ?? "the bucket"}`}
              selectedId={selected}
              onOpen={onTile}
              checked={(id) => selection.has(id)}
              onSelectAll={() => selection.selectAll()}
              focusRequest={focusRequest}
            />
          )}
        </DropZone>
      </div>
      {selected && (
        <DetailPanel
          id={selected}
          onClose={closeDetail}
          onView={() => setQuery({ view: "1" })}
          onChanged={(o) => pager.replace(o)}
          onDeleted={(id) => {
            setQuery({ object: null });
            afterDelete([id]);
          }}
        />
      )}
      {viewing && viewed && (
        <Viewer
          object={viewed}
          position={`${openedIndex.current + 1} of ${total ?? "…"}`}
          onPrev={neighbour(-1)}
          onNext={neighbour(1)}
          onClose={closeDetail}
        />
      )}
      <UndoToast onUndone={() => pager.invalidate()} />
    </div>
  );
}
