import { signal } from "@preact/signals";

/**
 * The objects picked on the media page: ids picked one by one (click, Ctrl/Cmd, Shift-range),
 * or "all of the filter", which names no ids: a bulk call then takes the listing's filter, so
 * objects never loaded on screen are included too.
 */
export class Selection {
  readonly ids = signal<ReadonlySet<string>>(new Set());
  /** Every object of the current filter (`total` of them), whatever is loaded. */
  readonly all = signal(false);
  /** Where a Shift-click range starts: the last tile clicked without Shift. */
  anchor: number | null = null;

  get size(): number {
    return this.ids.value.size;
  }

  has(id: string): boolean {
    return this.all.value || this.ids.value.has(id);
  }

  clear(): void {
    this.ids.value = new Set();
    this.all.value = false;
    this.anchor = null;
  }

  toggle(id: string, index: number): void {
    const next = new Set(this.ids.value);
    if (this.all.value) return this.clear();
    if (next.has(id)) next.delete(id);
    else next.add(id);
    this.ids.value = next;
    this.anchor = index;
  }

  /** The tiles from the anchor to `index` join the selection (`idAt` names the loaded ones). */
  range(index: number, idAt: (i: number) => string | undefined): void {
    const from = Math.min(this.anchor ?? index, index);
    const to = Math.max(this.anchor ?? index, index);
    const next = new Set(this.all.value ? [] : this.ids.value);
    for (let i = from; i <= to; i++) {
      const id = idAt(i);
      if (id) next.add(id);
    }
    this.all.value = false;
    this.ids.value = next;
  }

  selectAll(): void {
    this.ids.value = new Set();
    this.all.value = true;
  }
}
