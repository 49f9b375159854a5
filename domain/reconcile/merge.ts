/**
 * Merge-join of two listings sorted the same way, one page at a time from each side: memory
 * holds a page of each, whatever the totals. Storage lists keys in the order of their UTF-8
 * bytes; the catalogue is read in the same order (COLLATE "C").
 */

export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

export type Pair<L, R> = { key: string; left: L; right: null } | { key: string; left: null; right: R } | { key: string; left: L; right: R };

/** Pages as they come; throws if a side is not in order (a merge of unordered sides would report false differences). */
async function* ordered<T>(pages: AsyncIterable<T[]>, keyOf: (t: T) => string, side: string): AsyncGenerator<T> {
  let previous: string | null = null;
  for await (const page of pages) {
    for (const item of page) {
      const key = keyOf(item);
      if (previous !== null && compareUtf8(previous, key) >= 0) throw new Error(`${side} listing is not in byte order (${JSON.stringify(previous)} before ${JSON.stringify(key)})`);
      previous = key;
      yield item;
    }
  }
}

export async function* mergeJoin<L, R>(
  left: AsyncIterable<L[]>,
  leftKey: (l: L) => string,
  right: AsyncIterable<R[]>,
  rightKey: (r: R) => string,
): AsyncGenerator<Pair<L, R>> {
  const ls = ordered(left, leftKey, "storage");
  const rs = ordered(right, rightKey, "catalogue");
  let l = await ls.next();
  let r = await rs.next();
  while (!l.done || !r.done) {
    if (r.done || (!l.done && compareUtf8(leftKey(l.value), rightKey(r.value)) < 0)) {
      yield { key: leftKey(l.value!), left: l.value!, right: null };
      l = await ls.next();
    } else if (l.done || compareUtf8(leftKey(l.value), rightKey(r.value)) > 0) {
      yield { key: rightKey(r.value), left: null, right: r.value };
      r = await rs.next();
    } else {
      yield { key: leftKey(l.value), left: l.value, right: r.value };
      l = await ls.next();
      r = await rs.next();
    }
  }
}

/** Groups a stream into batches (for the lookups made per batch of candidates). */
export async function* batches<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
