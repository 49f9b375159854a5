/**
 * Rendering results: JSON for scripts (`--json`), otherwise tables for lists and key/value
 * lines for objects. Humans get sizes in MiB and a table that fits the terminal.
 */

export interface RenderOptions {
  /** Terminal width, or null when not a terminal (no column is dropped then). */
  width: number | null;
}

type Row = Record<string, unknown>;

const isPlainObject = (v: unknown): v is Row => typeof v === "object" && v !== null && !Array.isArray(v);

export function renderJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function render(value: unknown, opts: RenderOptions): string {
  if (isPlainObject(value) && Array.isArray(value.data) && typeof value.total === "number") {
    const data = value.data as unknown[];
    if (data.length === 0) return value.total > 0 ? `No items on this page (${value.total} in total).\n` : "No items.\n";
    let out = table(data.filter(isPlainObject), opts);
    if (value.hasMore === true) {
      out += `\n${data.length} of ${value.total}${value.hasMore ? " (more: use --offset/--limit, or --all)" : ""}\n`;
    }
    return out;
  }
  if (Array.isArray(value)) return value.length === 0 ? "No items.\n" : value.every(isPlainObject) ? table(value as Row[], opts) : `${value.map((v) => cell(v)).join("\n")}\n`;
  if (isPlainObject(value)) {
    // Lists of records inside an object (search results, history) read better as tables.
    const lists = Object.entries(value).filter(([, v]) => Array.isArray(v) && v.length > 0 && v.every(isPlainObject) && !v.every((x) => typeof x.name === "string"));
    if (lists.length === 0) return keyValue(value);
    const rest = Object.fromEntries(Object.entries(value).filter(([k]) => !lists.some(([l]) => l === k)));
    const parts = Object.keys(rest).length > 0 ? [keyValue(rest)] : [];
    for (const [name, rows] of lists) parts.push(`${name}:\n${table(rows as Row[], opts)}`);
    return parts.join("\n");
  }
  return `${cell(value)}\n`;
}

// ---------------------------------------------------------------------------------------

export function humanBytes(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}

const SIZE_FIELDS = /^(size|bytes)$|Bytes$|Storage$/;

function cell(value: unknown, field = ""): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "number" && SIZE_FIELDS.test(field)) return humanBytes(value);
  if (typeof value === "string") return value.replace(/[\r\n\t]+/g, " ");
  if (typeof value !== "object") return String(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return "-";
    if (value.every((v) => typeof v !== "object" || v === null)) return value.map((v) => cell(v)).join(", ");
    if (value.every((v) => isPlainObject(v) && typeof v.name === "string")) {
      // Facets and the like carry a count worth showing next to the name.
      return value.map((v) => ((v as Row).count !== undefined ? `${(v as Row).name} (${(v as Row).count})` : (v as Row).name)).join(", ");
    }
    return JSON.stringify(value);
  }
  return Object.keys(value).length === 0 ? "-" : JSON.stringify(value);
}

/** A column is shown when every value in it is a scalar or a list of scalars or names. */
function tabular(value: unknown): boolean {
  if (value === null || typeof value !== "object") return true;
  if (!Array.isArray(value)) return false;
  return value.every((v) => typeof v !== "object" || v === null || (isPlainObject(v) && typeof v.name === "string"));
}

const width = (s: string) => Bun.stringWidth(s);
const pad = (s: string, n: number) => s + " ".repeat(Math.max(0, n - width(s)));
const clip = (s: string, n: number) => (width(s) <= n ? s : `${s.slice(0, Math.max(1, n - 1))}…`);

/** Columns dropped first when the table is wider than the terminal: links to other records, then details. */
const DROP_FIRST = [(c: string) => c !== "id" && /Id$/.test(c), (c: string) => c === "etag" || c === "updatedAt" || c === "fileName"];

export function table(rows: Row[], opts: RenderOptions): string {
  let columns: string[] = [];
  for (const row of rows) for (const k of Object.keys(row)) if (!columns.includes(k)) columns.push(k);
  columns = columns.filter((c) => rows.every((r) => tabular(r[c])));
  const MAX_CELL = 60;
  const cells = rows.map((r) => columns.map((c) => clip(cell(r[c], c), MAX_CELL)));
  const header = (c: string) => c.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toUpperCase();
  const widthOf = (i: number) => Math.max(width(header(columns[i]!)), ...cells.map((r) => width(r[i]!)));
  let shown = columns.map((_, i) => i);
  const total = (idx: number[]) => idx.reduce((n, i) => n + widthOf(i) + 2, 0);
  let dropped = 0;
  if (opts.width) {
    for (const rule of DROP_FIRST) {
      for (const i of [...shown].reverse()) {
        if (total(shown) <= opts.width || shown.length <= 2) break;
        if (rule(columns[i]!)) {
          shown = shown.filter((s) => s !== i);
          dropped++;
        }
      }
    }
    while (total(shown) > opts.width && shown.length > 2) {
      shown = shown.slice(0, -1);
      dropped++;
    }
  }
  const widths = shown.map(widthOf);
  const line = (values: string[]) => `${values.map((v, j) => (j === values.length - 1 ? v : pad(v, widths[j]!))).join("  ")}\n`;
  let out = line(shown.map((i) => header(columns[i]!)));
  for (const r of cells) out += line(shown.map((i) => r[i]!));
  if (dropped > 0) out += `(${dropped} more column${dropped > 1 ? "s" : ""}: widen the terminal or use --json)\n`;
  return out;
}

/** Nested objects as dotted keys; lists of names joined. */
export function keyValue(obj: Row): string {
  const lines: [string, string][] = [];
  const walk = (value: unknown, prefix: string, field: string) => {
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) walk(v, prefix ? `${prefix}.${k}` : k, k);
      return;
    }
    if (Array.isArray(value) && value.length > 0 && value.every(isPlainObject) && !value.every((v) => typeof v.name === "string")) {
      value.forEach((item, i) => walk(item, `${prefix}[${i}]`, field));
      return;
    }
    lines.push([prefix, cell(value, field)]);
  };
  walk(obj, "", "");
  const keyWidth = Math.max(...lines.map(([k]) => width(k)));
  return lines.map(([k, v]) => `${pad(`${k}:`, keyWidth + 1)} ${v}\n`).join("");
}
