import { signal } from "@preact/signals";
import { memo } from "preact/compat";
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { call } from "../api.ts";
import { cancelQueued } from "../thumbs.ts";
import { type MediaObject, Thumb } from "./media.tsx";

const PAGE = 100;

/**
 * A list tool's result as pages fetched on demand: the grid asks for the range on screen and
 * only those pages are requested. Pages marked stale keep showing until their fresh copy arrives.
 */
export class Pager {
  readonly total = signal<number | null>(null);
  readonly version = signal(0);
  readonly error = signal<unknown>(null);
  /** A folder listing's subfolders (null for a flat listing). */
  readonly folders = signal<string[] | null>(null);
  private readonly pages = new Map<number, MediaObject[]>();
  private readonly stale = new Set<number>();
  private readonly loading = new Set<number>();
  private generation = 0;

  constructor(
    private readonly tool: string,
    private readonly input: Record<string, unknown>,
  ) {}

  get(index: number): MediaObject | undefined {
    return this.pages.get(Math.floor(index / PAGE))?.[index % PAGE];
  }

  /** Loaded objects in a range (for polling pending thumbnails). */
  loadedIn(from: number, to: number): MediaObject[] {
    const out: MediaObject[] = [];
    for (let i = from; i <= to; i++) {
      const o = this.get(i);
      if (o) out.push(o);
    }
    return out;
  }

  private range: [number, number] = [0, 0];

  ensure(from: number, to: number): void {
    this.range = [from, to];
    const first = Math.floor(Math.max(0, from) / PAGE);
    const last = Math.floor(Math.max(0, to) / PAGE);
    for (let p = first; p <= last; p++) {
      if (this.total.value !== null && p * PAGE >= this.total.value && p > 0) break;
      if ((this.pages.has(p) && !this.stale.has(p)) || this.loading.has(p)) continue;
      void this.fetch(p);
    }
    // Stale pages far from view are dropped rather than refetched.
    for (const p of [...this.stale]) {
      if (p < first - 1 || p > last + 1) {
        this.stale.delete(p);
        this.pages.delete(p);
      }
    }
  }

  private async fetch(p: number) {
    const generation = this.generation;
    this.loading.add(p);
    try {
      const page = await call<{ data: MediaObject[]; total: number; folders?: string[] }>(this.tool, { ...this.input, limit: PAGE, offset: p * PAGE });
      if (generation !== this.generation) return;
      this.pages.set(p, page.data);
      this.folders.value = page.folders ?? null;
      this.stale.delete(p);
      this.total.value = page.total;
      this.error.value = null;
    } catch (err) {
      if (generation === this.generation) this.error.value = err;
    } finally {
      this.loading.delete(p);
      if (generation === this.generation) this.version.value++;
    }
  }

  /** Everything may have changed (an upload, a delete): refetch what is on screen. */
  invalidate(): void {
    for (const p of this.pages.keys()) this.stale.add(p);
    this.generation++;
    this.loading.clear();
    this.ensure(...this.range);
  }

  replace(object: MediaObject): void {
    for (const page of this.pages.values()) {
      const i = page.findIndex((o) => o.id === object.id);
      if (i >= 0) page[i] = object;
    }
    this.version.value++;
  }
}

const GAP = 12;
const MIN_TILE = 150;
const LABEL = 40;
const OVERSCAN_ROWS = 2;

/**
 * The media grid: only the rows on screen (and two either side) exist in the page, so 10,000
 * objects cost what 30 do. Arrow keys, Home/End and Page Up/Down move between tiles; Enter
 * opens one.
 */
export function VirtualGrid(props: {
  pager: Pager;
  selectedId: string | null;
  /** A click or Enter on a tile, with the event (Shift and Ctrl/Cmd pick instead of opening). */
  onOpen: (object: MediaObject, index: number, e: MouseEvent | KeyboardEvent) => void;
  label: string;
  /** Is this object picked for a bulk action? */
  checked?: (id: string) => boolean;
  /** Ctrl/Cmd-A: every object of the filter, not only those on screen. */
  onSelectAll?: () => void;
  /** Focus goes to this tile (after a delete: the one that took the deleted one's place). */
  focusRequest?: { index: number; seq: number } | null;
}) {
  const { pager } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState({ width: 0, height: 0 });
  // The rows on screen: the grid scrolls in its own box, or, where the stylesheet lets the box
  // grow (overflow visible: on a phone the page scrolls as a whole), with the page.
  const [view, setView] = useState({ top: 0, height: 0 });
  const pageScrolls = () => getComputedStyle(scroller.current!).overflowY === "visible";
  const measureView = () => {
    const el = scroller.current!;
    if (!pageScrolls()) return setView({ top: el.scrollTop, height: el.clientHeight });
    const r = el.getBoundingClientRect();
    setView({ top: Math.max(0, -r.top), height: window.innerHeight });
  };
  const [focusIndex, setFocusIndex] = useState(0);
  const focusWanted = useRef(false);
  const pendingFocus = useRef(0);
  pager.version.value; // re-render when pages arrive

  useLayoutEffect(() => {
    const el = scroller.current!;
    const measure = () => {
      setSize({ width: el.clientWidth, height: el.clientHeight });
      measureView();
    };
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    let frame = 0;
    const onPageScroll = () => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(measureView);
    };
    window.addEventListener("scroll", onPageScroll, { passive: true });
    window.addEventListener("resize", onPageScroll);
    return () => {
      ro.disconnect();
      cancelAnimationFrame(frame);
      window.removeEventListener("scroll", onPageScroll);
      window.removeEventListener("resize", onPageScroll);
    };
  }, []);

  const total = pager.total.value ?? 0;
  const width = Math.max(size.width - 2, MIN_TILE);
  const cols = Math.max(1, Math.floor((width + GAP) / (MIN_TILE + GAP)));
  const tile = Math.floor((width - GAP * (cols - 1)) / cols);
  const rowHeight = tile + LABEL + GAP;
  const rows = Math.ceil(total / cols);
  const firstRow = Math.max(0, Math.floor(view.top / rowHeight) - OVERSCAN_ROWS);
  const lastRow = Math.min(rows - 1, Math.ceil((view.top + view.height) / rowHeight) + OVERSCAN_ROWS);
  const from = firstRow * cols;
  const to = Math.min(total, (lastRow + 1) * cols) - 1;

  useEffect(() => {
    pager.ensure(from, Math.max(to, 0));
  }, [from, to, pager.version.value, pager.total.value === null]);

  // Thumbnails queued for tiles that scrolled away are not worth fetching any more.
  useEffect(() => {
    const keep = new Set<string>();
    for (const o of pager.loadedIn(from, to)) if (o.thumbnail?.etag) keep.add(`${o.id}:${o.thumbnail.etag}`);
    cancelQueued(keep);
  }, [from, to]);

  useEffect(() => {
    if (!focusWanted.current) return;
    // The ref, not this render's state: an effect of an earlier render may run after a newer move.
    const el = scroller.current?.querySelector<HTMLElement>(`[data-index="${pendingFocus.current}"]`);
    if (el) {
      el.focus({ preventScroll: true });
      focusWanted.current = false;
    }
  });

  // Tiles are memoized: the callbacks they get must not change from frame to frame.
  const latest = useRef({ onKeyDown: (_e: KeyboardEvent, _i: number) => {}, onOpen: props.onOpen, setFocusIndex });
  const keyDown = useCallback((e: KeyboardEvent, i: number) => latest.current.onKeyDown(e, i), []);
  const open = useCallback((o: MediaObject, i: number, e: MouseEvent | KeyboardEvent) => {
    latest.current.setFocusIndex(i);
    latest.current.onOpen(o, i, e);
  }, []);

  useEffect(() => {
    const r = props.focusRequest;
    if (!r || total === 0) return;
    moveTo(Math.min(r.index, total - 1));
  }, [props.focusRequest?.seq, total === 0]);

  const onScroll = () => {
    requestAnimationFrame(measureView);
  };

  const moveTo = (i: number) => {
    const next = Math.max(0, Math.min(total - 1, i));
    setFocusIndex(next);
    pendingFocus.current = next;
    focusWanted.current = true;
    const el = scroller.current!;
    const top = Math.floor(next / cols) * rowHeight;
    if (pageScrolls()) {
      const onScreen = el.getBoundingClientRect().top + top;
      if (onScreen < 0) window.scrollBy(0, onScreen);
      else if (onScreen + rowHeight > window.innerHeight) window.scrollBy(0, onScreen + rowHeight - window.innerHeight);
    } else if (top < el.scrollTop) el.scrollTop = top;
    else if (top + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = top + rowHeight - el.clientHeight;
  };

  const onKeyDown = (e: KeyboardEvent, tileIndex: number) => {
    // Keys pressed faster than focus follows count from where focus is going, not where it was.
    const i = focusWanted.current ? pendingFocus.current : tileIndex;
    const perPage = Math.max(1, Math.floor(view.height / rowHeight)) * cols;
    const moves: Record<string, number> = {
      ArrowRight: i + 1,
      ArrowLeft: i - 1,
      ArrowDown: i + cols,
      ArrowUp: i - cols,
      PageDown: i + perPage,
      PageUp: i - perPage,
      Home: 0,
      End: total - 1,
    };
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "a" && props.onSelectAll) {
      e.preventDefault();
      props.onSelectAll();
      return;
    }
    const target = moves[e.key];
    if (target === undefined) return;
    e.preventDefault();
    moveTo(target);
  };
  latest.current = { onKeyDown, onOpen: props.onOpen, setFocusIndex };

  const tiles = [];
  for (let i = from; i <= to; i++) {
    const o = pager.get(i);
    tiles.push(
      <Tile
        key={i}
        index={i}
        object={o}
        total={total}
        x={(i % cols) * (tile + GAP)}
        y={Math.floor(i / cols) * rowHeight}
        size={tile}
        selected={o !== undefined && props.selectedId === o.id}
        checked={o !== undefined && (props.checked?.(o.id) ?? false)}
        focused={i === focusIndex}
        onOpen={open}
        onKey={keyDown}
      />,
    );
  }

  return (
    <div class="grid-scroll" ref={scroller} onScroll={onScroll}>
      <div class="grid-sizer" role="list" aria-label={props.label} style={{ height: `${Math.max(rows * rowHeight - GAP, 0)}px` }}>
        {tiles}
      </div>
    </div>
  );
}

interface TileProps {
  index: number;
  object: MediaObject | undefined;
  total: number;
  x: number;
  y: number;
  size: number;
  selected: boolean;
  checked: boolean;
  focused: boolean;
  onOpen: (o: MediaObject, index: number, e: MouseEvent | KeyboardEvent) => void;
  onKey: (e: KeyboardEvent, index: number) => void;
}

/** One grid cell; memoized, so a scroll renders only the rows that come into view. */
const Tile = memo(function Tile({ index: i, object: o, total, x, y, size, selected, checked, focused, onOpen, onKey }: TileProps) {
  const style = { transform: `translate(${x}px, ${y}px)`, width: `${size}px`, height: `${size + LABEL}px` };
  return (
    <div role="listitem" class="tile-slot" style={style} aria-setsize={total} aria-posinset={i + 1}>
      {o ? (
        <button
          type="button"
          class={`tile${selected ? " selected" : ""}${checked ? " checked" : ""}`}
          data-index={i}
          data-id={o.id}
          data-checked={checked ? "true" : undefined}
          tabIndex={focused ? 0 : -1}
          aria-pressed={selected}
          aria-label={`${o.fileName}, ${o.kind}${checked ? ", selected" : ""}`}
          title={o.key}
          onClick={(e) => onOpen(o, i, e)}
          onKeyDown={(e) => onKey(e, i)}
        >
          {checked && (
            <span class="tile-check" aria-hidden="true">
              ✓
            </span>
          )}
          <span class="tile-pic" style={{ height: `${size}px` }}>
            <Thumb object={o} />
          </span>
          <span class="tile-name">{o.fileName}</span>
        </button>
      ) : (
        <span class="tile skeleton" data-index={i} aria-label="Loading" tabIndex={focused ? 0 : -1} onKeyDown={(e) => onKey(e, i)} />
      )}
    </div>
  );
});
