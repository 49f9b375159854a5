import { useState } from "preact/hooks";
import { call, can } from "../api.ts";
import { flattenCategories } from "../ui/detail.tsx";
import { ConfirmButton, ErrorNote, Field, Listed, notify, notifyError, PageHead, useLoad, useSubmit } from "../ui/kit.tsx";

interface Node {
  id: string;
  name: string;
  slug: string;
  parentId: string | null;
  objectCount: number;
  children: Node[];
}

export function CategoriesPage() {
  const tree = useLoad(() => call<{ data: Node[]; total: number }>("categories_list"), []);
  const flat = tree.data ? flattenCategories(tree.data.data) : [];
  const [name, setName] = useState("");
  const [parent, setParent] = useState("");
  const [create, error] = useSubmit(async () => {
    await call("categories_create", { name: name.trim(), ...(parent ? { parentId: parent } : {}) });
    notify(`Category ${name.trim()} created`);
    setName("");
    tree.reload();
  });
  return (
    <>
      <PageHead title="Categories" sub="One tree for the whole organization; filtering by a category includes everything below it." />
      {can("categories_create") && (
        <form class="card inline-form" onSubmit={create} aria-label="Create a category">
          <Field label="Name">
            <input value={name} required onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="Italy" />
          </Field>
          <Field label="Under">
            <select value={parent} onChange={(e) => setParent((e.target as HTMLSelectElement).value)}>
              <option value="">(root)</option>
              {flat.map(({ node, depth }) => (
                <option key={node.id} value={node.id}>
                  {" ".repeat(depth * 2)}
                  {node.name}
                </option>
              ))}
            </select>
          </Field>
          <button type="submit" class="primary">
            Create category
          </button>
          <ErrorNote error={error} />
        </form>
      )}
      <Listed rows={tree.data?.data} error={tree.error} empty="No categories yet.">
        {(rows) => (
        <section class="card">
          <p class="muted">{tree.data!.total} categories</p>
          <ul class="tree" aria-label="Categories">
            {rows.map((n) => (
              <TreeNode key={n.id} node={n} all={flat.map((f) => f.node)} depth={1} onChanged={tree.reload} />
            ))}
          </ul>
        </section>
        )}
      </Listed>
    </>
  );
}

/** Ids of a node and everything below it: a category cannot move under its own descendants. */
function subtree(n: Node): Set<string> {
  return new Set([n.id, ...n.children.flatMap((c) => [...subtree(c)])]);
}

function TreeNode({ node, all, depth, onChanged }: { node: Node; all: Node[]; depth: number; onChanged: () => void }) {
  const [moving, setMoving] = useState(false);
  const [target, setTarget] = useState(node.parentId ?? "");
  const blocked = subtree(node);
  const move = async (e: Event) => {
    e.preventDefault();
    try {
      await call("categories_move", { id: node.id, parentId: target || null });
      notify(`${node.name} moved`);
      setMoving(false);
      onChanged();
    } catch (err) {
      notifyError(err);
    }
  };
  return (
    <li data-depth={depth}>
      <div class="tree-row">
        <span class="tree-name">{node.name}</span>
        <span class="muted small-text">
          {node.slug} · {node.objectCount} objects
        </span>
        <span class="row-actions">
          {can("categories_move") && (
            <button type="button" class="small" aria-expanded={moving} onClick={() => setMoving(!moving)} aria-label={`Move ${node.name}`}>
              Move
            </button>
          )}
          {can("categories_delete") && (
            <ConfirmButton
              class="small danger"
              label="Delete"
              ariaLabel={`Delete category ${node.name}`}
              question={`Delete category ${node.name}?`}
              detail={<p>Its children move to the root and its objects leave it; the objects themselves are kept.</p>}
              onConfirm={async () => {
                await call("categories_delete", { id: node.id });
                notify(`Category ${node.name} deleted`);
                onChanged();
              }}
            />
          )}
        </span>
      </div>
      {moving && (
        <form class="inline-form compact" onSubmit={move}>
          <label class="field">
            <span class="field-label">Move {node.name} under</span>
            <select value={target} onChange={(e) => setTarget((e.target as HTMLSelectElement).value)}>
              <option value="">(root)</option>
              {all
                .filter((n) => !blocked.has(n.id))
                .map((n) => (
                  <option key={n.id} value={n.id}>
                    {n.name}
                  </option>
                ))}
            </select>
          </label>
          <button type="submit" class="small primary">
            Move
          </button>
        </form>
      )}
      {node.children.length > 0 && (
        <ul>
          {node.children.map((c) => (
            <TreeNode key={c.id} node={c} all={all} depth={depth + 1} onChanged={onChanged} />
          ))}
        </ul>
      )}
    </li>
  );
}
