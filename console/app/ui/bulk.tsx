import { useState } from "preact/hooks";
import { call, can, route } from "../api.ts";
import { plural } from "../format.ts";
import { flattenCategories } from "./detail.tsx";
import { ConfirmButton, Field, notify, notifyError, useAction, useLoad } from "./kit.tsx";
import type { Selection } from "./selection.ts";
import { offerUndo } from "./undo.tsx";

/** What a bulk call answers: one outcome per object, and a cursor while a filter has more. */
interface BulkResult {
  results: { id: string; status: "done" | "not_found" | "refused"; message?: string }[];
  done: number;
  failed: number;
  cursor: string | null;
}

/** The listing's filter as a bulk call's `filter` (the same filters media_list took). */
export type BulkFilter = Record<string, string>;

/** A tool the server may not have (an older one): the action is left out rather than failing. */
export function offers(name: string): boolean {
  try {
    route(name);
    return can(name);
  } catch {
    return false;
  }
}

/**
 * Runs a bulk tool over the selection: its ids, or every object of the filter, a call per
 * thousand. `filter` null: the listing is a folder's, which a bulk filter cannot name (its
 * prefix reaches subfolders too), so its ids are listed first.
 */
async function runBulk(tool: string, selection: Selection, filter: BulkFilter | null, listing: Record<string, unknown>, changes: Record<string, unknown> = {}): Promise<BulkResult> {
  const all: BulkResult = { results: [], done: 0, failed: 0, cursor: null };
  if (!selection.all.value || filter === null) {
    const ids = await idsOf(selection, listing);
    for (let i = 0; i < ids.length; i += 1000) {
      const r = await call<BulkResult>(tool, { ids: ids.slice(i, i + 1000), ...changes });
      all.results.push(...r.results);
      all.done += r.done;
      all.failed += r.failed;
    }
    return all;
  }
  let cursor: string | undefined;
  do {
    const r = await call<BulkResult>(tool, { filter, limit: 1000, ...changes, ...(cursor ? { cursor } : {}) });
    all.results.push(...r.results);
    all.done += r.done;
    all.failed += r.failed;
    cursor = r.cursor ?? undefined;
  } while (cursor);
  return all;
}

function outcome(verb: string, r: BulkResult): string {
  const refused = r.results.find((x) => x.status === "refused")?.message;
  return `${plural(r.done, "object")} ${verb}${r.failed > 0 ? `; ${r.failed} not (${refused ?? "gone meanwhile"})` : ""}`;
}

/** The ids of the selection: for "all of the filter", every object the listing names (up to 1,000: more take the filter). */
async function idsOf(selection: Selection, listing: Record<string, unknown>): Promise<string[]> {
  if (!selection.all.value) return [...selection.ids.value];
  const ids: string[] = [];
  for (let offset = 0; offset < 1000; offset += 200) {
    const page = await call<{ data: { id: string }[]; hasMore: boolean }>("media_list", { ...listing, limit: 200, offset });
    ids.push(...page.data.map((o) => o.id));
    if (!page.hasMore) break;
  }
  return ids;
}

/**
 * What can be done to the picked objects at once: delete (to the trash, with Undo), tag,
 * categorize, move into a folder, download each one (its own presigned URL, no archive).
 */
export function BulkBar(props: {
  selection: Selection;
  total: number;
  filter: BulkFilter | null;
  listing: Record<string, unknown>;
  onChanged: () => void;
  onDeleted: () => void;
}) {
  const { selection } = props;
  const count = selection.all.value ? props.total : selection.size;
  const [tagText, setTagText] = useState("");
  const [category, setCategory] = useState("");
  const [prefix, setPrefix] = useState("");
  const categories = useLoad(
    () => call<{ data: { id: string; name: string; slug: string; children: any[] }[] }>("categories_list").then((r) => flattenCategories(r.data)),
    [],
  );
  const [tag, tagging] = useAction(async () => {
    const tags = tagText.split(",").map((t) => t.trim()).filter(Boolean);
    if (tags.length === 0) return;
    notify(outcome("tagged", await runBulk("objects_bulk_update", selection, props.filter, props.listing, { addTags: tags })));
    setTagText("");
    props.onChanged();
  });
  const [categorize, categorizing] = useAction(async () => {
    if (!category) return;
    notify(outcome("categorized", await runBulk("objects_bulk_update", selection, props.filter, props.listing, { addCategories: [category] })));
    props.onChanged();
  });
  const [move, moving] = useAction(async () => {
    const to = prefix.trim().replace(/^\/+/, "");
    notify(outcome("moved", await runBulk("objects_bulk_update", selection, props.filter, props.listing, { moveTo: { prefix: to && !to.endsWith("/") ? `${to}/` : to } })));
    setPrefix("");
    selection.clear();
    props.onChanged();
  });
  const [download, downloading] = useAction(async () => {
    for (const id of await idsOf(selection, props.listing)) {
      const r = await call<{ url: string }>("presign_download", { objectId: id });
      const a = document.createElement("a");
      a.href = r.url;
      a.rel = "noopener";
      a.download = "";
      document.body.append(a);
      a.click();
      a.remove();
    }
  });
  const remove = async () => {
    const r = await runBulk("objects_bulk_delete", selection, props.filter, props.listing);
    const gone = r.results.filter((x) => x.status === "done").map((x) => x.id);
    selection.clear();
    props.onDeleted();
    offerUndo(`${outcome("moved to the trash", r)}.`, async () => {
      for (const id of gone) await call("trash_restore", { id });
    });
  };

  if (count === 0) return null;
  return (
    <section class="bulk-bar card" aria-label="Selected objects">
      <p class="bulk-count">
        <strong>{plural(count, "object")} selected</strong>
        {selection.all.value ? " (all of this filter)" : ""}
        <button type="button" class="small" onClick={() => selection.clear()}>
          Clear selection
        </button>
      </p>
      <div class="bulk-actions">
        {offers("objects_bulk_delete") && (
          <ConfirmButton
            label="Delete"
            class="danger small"
            question={`Move ${plural(count, "object")} to the trash?`}
            detail={<p>They leave lists and search at once; the trash keeps them for 7 days, and Undo brings them back.</p>}
            confirmLabel="Move to trash"
            onConfirm={remove}
          />
        )}
        {offers("presign_download") && (
          <button type="button" class="small" disabled={downloading} onClick={() => download().catch(notifyError)}>
            Download each
          </button>
        )}
        {offers("objects_bulk_update") && (
          <>
            <form class="inline-form compact" onSubmit={(e) => (e.preventDefault(), void tag())}>
              <Field label="Tags to add (comma-separated)" hideLabel>
                <input value={tagText} onInput={(e) => setTagText((e.target as HTMLInputElement).value)} placeholder="Tags to add" size={14} />
              </Field>
              <button type="submit" class="small" disabled={tagging || !tagText.trim()}>
                Tag
              </button>
            </form>
            <form class="inline-form compact" onSubmit={(e) => (e.preventDefault(), void categorize())}>
              <Field label="Category to add" hideLabel>
                <select value={category} onChange={(e) => setCategory((e.target as HTMLSelectElement).value)}>
                  <option value="">Category…</option>
                  {categories.data?.map(({ node, depth }) => (
                    <option key={node.id} value={node.id}>
                      {" ".repeat(depth * 2)}
                      {node.name}
                    </option>
                  ))}
                </select>
              </Field>
              <button type="submit" class="small" disabled={categorizing || !category}>
                Categorize
              </button>
            </form>
            <form class="inline-form compact" onSubmit={(e) => (e.preventDefault(), void move())}>
              <Field label="Move to folder (empty: the top of the bucket)" hideLabel>
                <input value={prefix} onInput={(e) => setPrefix((e.target as HTMLInputElement).value)} placeholder="Move to folder/" size={14} />
              </Field>
              <button type="submit" class="small" disabled={moving}>
                Move
              </button>
            </form>
          </>
        )}
      </div>
    </section>
  );
}
