import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { call, can } from "../api.ts";
import { plural } from "../format.ts";
import { location, setQuery } from "../router.ts";
import { Upload } from "../upload.ts";
import { flattenCategories, DetailPanel } from "../ui/detail.tsx";
import { Pager, VirtualGrid } from "../ui/grid.tsx";
import { ErrorNote, Field, Link, PageHead, useLoad } from "../ui/kit.tsx";
import type { Label } from "../ui/media.tsx";
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
  const bucket = useLoad(() => call<{ id: string; name: string }>("buckets_get", { id: bucketId }), [bucketId]);
  const tags = useLoad(() => call<{ data: Label[] }>("tags_list", { limit: 200 }).then((r) => r.data), []);
  const categories = useLoad(() => call<{ data: { id: string; name: string; slug: string; children: any[] }[] }>("categories_list").then((r) => flattenCategories(r.data)), []);

  const key = JSON.stringify(filters);
  const pager = useMemo(() => {
    const input: Record<string, unknown> = { bucketId, sort: filters.sort, order: filters.order };
    if (filters.kind) input.kind = filters.kind;
    if (filters.tags) input.tags = filters.tags;
    if (filters.categories) input.categories = filters.categories;
    if (filters.search) input.search = filters.search;
    return new Pager("media_list", input);
  }, [bucketId, key]);

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
        />
        <ErrorNote error={bucket.error} />
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
        {canUpload && <UploadPanel bucketId={bucketId} onUploaded={onUploaded} />}
        <ErrorNote error={pager.error.value} />
        <DropZone bucketId={bucketId} onUploaded={onUploaded} enabled={canUpload}>
          {total === 0 ? (
            <div class="empty">
              {Object.values(filters).some((v, i) => i < 4 && v) ? "No object matches these filters." : canUpload ? "This bucket is empty. Drop files here or choose them above." : "This bucket is empty."}
            </div>
          ) : (
            <VirtualGrid
              pager={pager}
              label={`Objects in ${bucket.data?.name ?? "the bucket"}`}
              selectedId={selected}
              onOpen={(o) => setQuery({ object: o.id })}
            />
          )}
        </DropZone>
      </div>
      {selected && (
        <DetailPanel
          id={selected}
          onClose={() => setQuery({ object: null })}
          onChanged={(o) => pager.replace(o)}
          onDeleted={() => {
            setQuery({ object: null });
            pager.invalidate();
          }}
        />
      )}
    </div>
  );
}
