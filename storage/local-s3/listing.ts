// Key ordering and the list algorithm shared by ListObjects (v1/v2) and
// ListMultipartUploads. S3 orders keys by their UTF-8 bytes; JavaScript compares
// UTF-16 code units, which disagrees for astral characters vs U+E000..U+FFFF,
// hence the custom comparator.

export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Move surrogates (U+D800..DFFF) above U+E000..U+FFFF: that is code point (= UTF-8) order.
    if (x >= 0xd800) x += x < 0xe000 ? 0x2000 : -0x800;
    if (y >= 0xd800) y += y < 0xe000 ? 0x2000 : -0x800;
    return x - y;
  }
  return a.length - b.length;
}

/** First index whose key is > target (strict) or >= target. */
export function lowerBound(sorted: readonly string[], target: string, strict: boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareKeys(sorted[mid]!, target);
    if (c < 0 || (strict && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Keys sharing a prefix are contiguous in sorted order: find the end of that run. */
function endOfPrefixRun(sorted: readonly string[], from: number, prefix: string): number {
  let lo = from;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]!.startsWith(prefix)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface ListParams {
  prefix: string;
  delimiter: string;
  maxKeys: number;
  /** Resume point: list strictly after this key / common prefix. */
  after?: string;
  /** The resume point is a common prefix: skip every key under it too. */
  afterIsPrefix?: boolean;
}

export interface ListEntry {
  value: string;
  isPrefix: boolean;
}

export interface ListResult {
  entries: ListEntry[];
  truncated: boolean;
}

export function listKeys(sorted: readonly string[], p: ListParams): ListResult {
  if (p.maxKeys === 0) return { entries: [], truncated: false };
  let i = lowerBound(sorted, p.prefix, false);
  if (p.after !== undefined) {
    i = Math.max(i, lowerBound(sorted, p.after, true));
    if (p.afterIsPrefix) i = endOfPrefixRun(sorted, i, p.after);
  }
  const entries: ListEntry[] = [];
  let truncated = false;
  while (i < sorted.length) {
    const key = sorted[i]!;
    if (!key.startsWith(p.prefix)) break;
    let entry: ListEntry = { value: key, isPrefix: false };
    let next = i + 1;
    if (p.delimiter !== "") {
      const d = key.indexOf(p.delimiter, p.prefix.length);
      if (d >= 0) {
        const common = key.slice(0, d + p.delimiter.length);
        entry = { value: common, isPrefix: true };
        next = endOfPrefixRun(sorted, i, common);
      }
    }
    if (entries.length >= p.maxKeys) {
      truncated = true;
      break;
    }
    entries.push(entry);
    i = next;
  }
  return { entries, truncated };
}
