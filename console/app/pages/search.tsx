import { useEffect, useState } from "preact/hooks";
import { call } from "../api.ts";
import { bytes, plural } from "../format.ts";
import { location, setQuery } from "../router.ts";
import { DetailPanel } from "../ui/detail.tsx";
import { Empty, ErrorNote, Loading, PageHead } from "../ui/kit.tsx";
import { type MediaObject, Thumb } from "../ui/media.tsx";

interface Facet {
  slug: string;
  name: string;
  count: number;
}
/** Where a result matched (the search answer's `matches`): the snippet is HTML-escaped text with <mark> around the matched words. */
interface Match {
  id: string;
  in: string[];
  page: number | null;
  snippet: string | null;
}
interface SearchResult {
  media: MediaObject[];
  matches?: Match[];
  total: number;
  facets: { tags: Facet[]; categories: Facet[]; kinds: { kind: string; count: number }[] };
}

const PAGE = 60;
const list = (v: string | null) => (v ? v.split(",").filter(Boolean) : []);

export function SearchPage() {
  const q = location.value.query;
  const query = q.get("q") ?? "";
  const kind = q.get("kind") ?? "";
  const tags = list(q.get("tags"));
  const categories = list(q.get("categories"));
  const selected = q.get("object");
  const [text, setText] = useState(query);
  const [result, setResult] = useState<SearchResult | null>(null);
  const [more, setMore] = useState<MediaObject[]>([]);
  const [moreMatches, setMoreMatches] = useState<Match[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  const key = JSON.stringify([query, kind, tags, categories]);

  const input = (offset: number) => {
    const i: Record<string, unknown> = { q: query, limit: PAGE, offset };
    if (kind) i.kind = kind;
    if (tags.length) i.tags = tags.join(",");
    if (categories.length) i.categories = categories.join(",");
    return i;
  };

  useEffect(() => {
    setText(query);
    setMore([]);
    setMoreMatches([]);
    if (!query.trim()) return setResult(null);
    let live = true;
    setLoading(true);
    call<SearchResult>("search", input(0)).then(
      (r) => {
        if (!live) return;
        setResult(r);
        setError(null);
        setLoading(false);
      },
      (err) => {
        if (!live) return;
        setError(err);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [key]);

  const toggle = (name: "tags" | "categories", current: string[], slug: string) => {
    const next = current.includes(slug) ? current.filter((s) => s !== slug) : [...current, slug];
    setQuery({ [name]: next.join(",") || null });
  };
  const shown = result ? [...result.media, ...more] : [];
  const matchOf = new Map([...(result?.matches ?? []), ...moreMatches].map((m) => [m.id, m]));

  return (
    <div class={`media-page${selected ? " with-detail" : ""}`}>
      <div class="media-main">
        <PageHead title="Search" sub="Words must all match; “a phrase”, -exclude, prefix*, a OR b." />
        <form
          class="search-bar"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            setQuery({ q: text.trim() || null, object: null });
          }}
        >
          <label class="visually-hidden" for="search-q">
            Search query
          </label>
          <input id="search-q" type="search" value={text} placeholder='sunset -"draft" beach OR sea' onInput={(e) => setText((e.target as HTMLInputElement).value)} />
          <button type="submit" class="primary">
            Search
          </button>
        </form>
        <ErrorNote error={error} />
        {!query ? (
          <Empty>Type a query to search keys, file names, tags, categories, metadata and the text inside files.</Empty>
        ) : loading && !result ? (
          <Loading what="Searching" />
        ) : result ? (
          <div class="search-layout">
            <aside class="facets" aria-label="Narrow the results">
              <FacetGroup title="Kinds">
                {result.facets.kinds.map((f) => (
                  <FacetBox key={f.kind} label={f.kind} count={f.count} checked={kind === f.kind} onChange={() => setQuery({ kind: kind === f.kind ? null : f.kind })} />
                ))}
              </FacetGroup>
              <FacetGroup title="Tags">
                {facetWithSelected(result.facets.tags, tags).map((f) => (
                  <FacetBox key={f.slug} label={f.name} count={f.count} checked={tags.includes(f.slug)} onChange={() => toggle("tags", tags, f.slug)} />
                ))}
              </FacetGroup>
              <FacetGroup title="Categories">
                {facetWithSelected(result.facets.categories, categories).map((f) => (
                  <FacetBox key={f.slug} label={f.name} count={f.count} checked={categories.includes(f.slug)} onChange={() => toggle("categories", categories, f.slug)} />
                ))}
              </FacetGroup>
            </aside>
            <section class="results" aria-label="Results">
              <p class="result-count" role="status">
                {plural(result.total, "match", "matches")}
              </p>
              {result.total === 0 ? (
                <Empty>Nothing matches. Remove a filter or change the words.</Empty>
              ) : (
                <ul class="result-grid">
                  {shown.map((o) => (
                    <li key={o.id}>
                      <button type="button" class={`tile${selected === o.id ? " selected" : ""}`} aria-pressed={selected === o.id} onClick={() => setQuery({ object: o.id })}>
                        <span class="tile-pic">
                          <Thumb object={o} />
                        </span>
                        <span class="tile-name">{o.fileName}</span>
                        <span class="tile-sub muted">
                          {o.kind} · {bytes(o.size)}
                        </span>
                        <Snippet match={matchOf.get(o.id)} />
                      </button>
                    </li>
                  ))}
                </ul>
              )}
              {shown.length < result.total && (
                <button type="button" onClick={() => call<SearchResult>("search", input(shown.length)).then((r) => (setMore([...more, ...r.media]), setMoreMatches([...moreMatches, ...(r.matches ?? [])])), setError)}>
                  Show more
                </button>
              )}
            </section>
          </div>
        ) : null}
      </div>
      {selected && <DetailPanel id={selected} onClose={() => setQuery({ object: null })} onChanged={() => {}} onDeleted={() => setQuery({ object: null, q: query })} />}
    </div>
  );
}

/** A selected facet value stays listed (with 0) even when the match set no longer counts it. */
function facetWithSelected(facets: Facet[], selected: string[]): Facet[] {
  const missing = selected.filter((s) => !facets.some((f) => f.slug === s)).map((slug) => ({ slug, name: slug, count: 0 }));
  return [...facets, ...missing];
}

function FacetGroup({ title, children }: { title: string; children: preact.ComponentChildren }) {
  const items = Array.isArray(children) ? children : [children];
  return (
    <fieldset class="facet-group">
      <legend>{title}</legend>
      {items.length === 0 ? <p class="muted small-text">None</p> : children}
    </fieldset>
  );
}

function FacetBox(props: { label: string; count: number; checked: boolean; onChange: () => void }) {
  return (
    <label class="facet">
      <input type="checkbox" checked={props.checked} onChange={props.onChange} />
      <span class="facet-name">{props.label}</span>
      <span class="facet-count">{props.count}</span>
    </label>
  );
}

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };
const unescape = (s: string) => s.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]!);

/**
 * The words around a match inside the file or its metadata, matched words marked; a match in
 * the name or tags shows nothing more (the tile says it). Built as text nodes and <mark>
 * elements, never as HTML, so nothing in a file can reach the page as markup.
 */
function Snippet({ match }: { match: Match | undefined }) {
  if (!match?.snippet || !(match.in.includes("text") || match.in.includes("metadata"))) return null;
  const parts = match.snippet.split(/(<mark>|<\/mark>)/);
  let marked = false;
  const nodes = [];
  for (const [i, part] of parts.entries()) {
    if (part === "<mark>" || part === "</mark>") marked = part === "<mark>";
    else if (part) nodes.push(marked ? <mark key={i}>{unescape(part)}</mark> : unescape(part));
  }
  return (
    <span class="tile-snippet">
      {nodes}
      {match.page !== null && <span class="muted"> · page {match.page}</span>}
    </span>
  );
}
