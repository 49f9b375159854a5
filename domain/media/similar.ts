import { type SQL, sql } from "drizzle-orm";
import { rowsOf } from "../../db/client.ts";
import type { DuplicateGroup, SimilarObject } from "../../contract/similar.ts";
import type { Caller } from "../access/caller.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import type { Deps } from "../core/deps.ts";
import { type Lab, deltaE } from "./colors.ts";
import { type Page, page } from "../core/pagination.ts";
import { readDb } from "../core/reads.ts";
import { viewsOf } from "./media.ts";
import { resolveLiveObject } from "./object-refs.ts";
import { hashColumns, segmentNeighbours } from "./picture-facts.ts";

/**
 * Near-identical pictures by their 64-bit difference hash (worker/derivatives/phash.ts): two
 * pictures are as similar as few bits differ (Hamming distance).
 *
 * The index is multi-index hashing over four 16-bit segments, each a btree column of
 * object_facts: if two hashes differ in at most r bits, one of their four segments differs in
 * at most floor(r / 4) (pigeonhole). So a query probes, per segment, every value within that
 * distance of its own (1 value for r <= 3, 17 for r <= 7, 137 for r <= 10), and checks the
 * true distance of the few rows found. Every radius is answered exactly; the cost grows with
 * it (bench/notes/2026-11-29-similar.md).
 *
 * The hash is made from the picture in grey, and a picture with no edges (one colour, or a smooth
 * gradient) hashes to nearly all zeros whatever its colour: a plain red and a plain blue picture
 * would be "the same picture". So two pictures are alike only when their dominant colours are
 * also within SAME_PICTURE_DELTA_E of each other; a resized or recompressed copy keeps its
 * colour within a few units.
 */

/**
 * How far apart (delta E) the dominant colours of two pictures of one scene may be: well above
 * what recompression moves (under 10) and below "another colour" (over 50). A picture with no
 * stored colour is compared by its hash alone.
 */
export const SAME_PICTURE_DELTA_E = 25;

const SEGMENTS = 4;

/** Rows whose hash shares a segment within reach of `hex`'s: a superset of those within `radius`. */
function candidates(hex: string, radius: number): SQL {
  const h = hashColumns(hex)!;
  const sub = Math.floor(radius / SEGMENTS);
  // The values are integers made here: written into the statement, so each probe is an index condition.
  const probes = h.segments.map((v, i) => sql.raw(`f.phash${i} in (${segmentNeighbours(v, sub).join(",")})`));
  return sql`(${sql.join(probes, sql` or `)})`;
}

const distanceTo = (phash: bigint) => sql`bit_count((f.phash # ${phash.toString()}::bigint)::bit(64))`;

/** An object's picture as the index compares it: its hash and dominant colour. */
interface Probe {
  hex: string;
  lab: Lab | null;
}

/** The hash and colour of an object's current version, or null when it has no hash (not a picture, or not processed yet). */
async function probeOf(deps: Deps, objectId: string, etag: string | null): Promise<Probe | null> {
  const [row] = rowsOf<{ phash: string | null; l: number | null; a: number | null; b: number | null }>(
    await deps.db.execute(
      sql`select f.phash::text as phash, f.color_l as l, f.color_a as a, f.color_b as b from object_facts f where f.object_id = ${objectId} and f.source_etag is not distinct from ${etag}::text`,
    ),
  );
  if (!row?.phash) return null;
  return {
    hex: BigInt.asUintN(64, BigInt(row.phash)).toString(16).padStart(16, "0"),
    lab: row.l === null || row.a === null || row.b === null ? null : { l: Number(row.l), a: Number(row.a), b: Number(row.b) },
  };
}

/** The rows of live objects alike to `probe` (hash within `radius`, colour within SAME_PICTURE_DELTA_E), `objectId` left out. */
function alikeRows(orgId: string, objectId: string, probe: Probe, radius: number, bucketId: string | null): SQL {
  const { l, a, b } = probe.lab ?? {};
  const sameColor = probe.lab
    ? sql`(f.color_l is null or (f.color_l - ${l}::real) ^ 2 + (f.color_a - ${a}::real) ^ 2 + (f.color_b - ${b}::real) ^ 2 <= ${SAME_PICTURE_DELTA_E ** 2}::real)`
    : sql`true`;
  return sql`
    object_facts f join media_objects o on o.id = f.object_id
    where f.org_id = ${orgId} and ${candidates(probe.hex, radius)}
      and ${distanceTo(hashColumns(probe.hex)!.phash)} <= ${radius} and ${sameColor}
      and f.object_id <> ${objectId}
      and o.org_id = ${orgId} and o.deleted_at is null and f.source_etag is not distinct from o.etag
      ${bucketId ? sql`and o.bucket_id = ${bucketId}` : sql``}`;
}

export interface SimilarQuery {
  id: string;
  bucketId?: string | undefined;
  maxDistance: number;
  limit: number;
  offset: number;
}

/**
 * The live objects whose picture is within `maxDistance` bits of this object's (and of a close
 * dominant colour), nearest first (then by id), in the caller's organization and the buckets it
 * may see. An object with no hash (not a picture, or still being processed) has none.
 */
export async function findSimilar(deps: Deps, caller: Caller, q: SimilarQuery): Promise<Page<SimilarObject>> {
  const primary = deps;
  deps = { ...deps, db: readDb(deps, caller.orgId) };
  const object = await resolveLiveObject(deps.db, caller, q.id);
  const bucketId = q.bucketId ? (await resolveBucket(deps, caller, q.bucketId)).id : caller.bucketId;
  const probe = await probeOf(deps, object.id, object.etag);
  if (!probe) return page([], 0, q.offset);
  const from = alikeRows(caller.orgId, object.id, probe, q.maxDistance, bucketId);
  const rows = rowsOf<{ id: string; distance: number; total: number | string }>(
    await deps.db.execute(sql`
      select f.object_id as id, ${distanceTo(hashColumns(probe.hex)!.phash)} as distance, count(*) over () as total
      from ${from}
      order by distance, f.object_id
      limit ${q.limit} offset ${q.offset}`),
  );
  const views = new Map((await viewsOf(deps, caller.orgId, rows.map((r) => r.id), { live: true, primary })).map((v) => [v.id, v]));
  const data = rows.flatMap((r) => {
    const view = views.get(r.id);
    return view ? [{ distance: Number(r.distance), object: view }] : [];
  });
  // Past the last row the window gave no count: the total is what came before.
  const total = rows.length ? Number(rows[0]!.total) : q.offset > 0 ? await countOf(deps, from) : 0;
  return page(data, total, q.offset);
}

async function countOf(deps: Deps, from: SQL): Promise<number> {
  const [row] = rowsOf<{ n: number }>(await deps.db.execute(sql`select count(*)::int as n from ${from}`));
  return row?.n ?? 0;
}

export interface DuplicatesQuery {
  bucketId: string;
  maxDistance: number;
  limit: number;
  offset: number;
}

/** Rows read per statement while a report loads a bucket's hashes. */
const READ_BATCH = 20_000;

export interface Hashed {
  id: string;
  key: string;
  size: number;
  hi: number;
  lo: number;
  lab: Lab | null;
}

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * A bucket's groups of near-identical pictures (every member alike to the group's largest: within
 * `maxDistance` bits, of a close colour), the groups that would free the most bytes first. The
 * report reads the bucket's hashes once, in keyed batches, and groups them in memory with the
 * same segment probes as findSimilar, so its cost is one pass over the bucket whatever the radius.
 */
export async function findDuplicates(deps: Deps, caller: Caller, q: DuplicatesQuery): Promise<Page<DuplicateGroup>> {
  deps = { ...deps, db: readDb(deps, caller.orgId) };
  const bucket = await resolveBucket(deps, caller, q.bucketId);
  const items: Hashed[] = [];
  for (let after = "00000000-0000-0000-0000-000000000000"; ; ) {
    const batch = rowsOf<{ id: string; key: string; size: number | string; phash: string; l: number | null; a: number | null; b: number | null }>(
      await deps.db.execute(sql`
        select o.id, o.key, o.size, f.phash::text as phash, f.color_l as l, f.color_a as a, f.color_b as b
        from media_objects o join object_facts f on f.object_id = o.id
        where o.org_id = ${caller.orgId} and o.bucket_id = ${bucket.id} and o.deleted_at is null
          and f.phash is not null and f.source_etag is not distinct from o.etag and o.id > ${after}::uuid
        order by o.id limit ${READ_BATCH}`),
    );
    for (const r of batch) {
      const u = BigInt.asUintN(64, BigInt(r.phash));
      const lab = r.l === null || r.a === null || r.b === null ? null : { l: Number(r.l), a: Number(r.a), b: Number(r.b) };
      items.push({ id: r.id, key: r.key, size: Number(r.size), hi: Number(u >> 32n), lo: Number(u & 0xffffffffn), lab });
    }
    if (batch.length < READ_BATCH) break;
    after = batch[batch.length - 1]!.id;
  }
  const groups = groupNear(items, q.maxDistance)
    .flatMap((component) => aroundLargest(component, q.maxDistance))
    .map((members) => {
      const objects = members.map((m) => ({ id: m.id, key: m.key, size: m.size }));
      const total = objects.reduce((n, o) => n + o.size, 0);
      return { objects, bytes: total, reclaimable: total - objects[0]!.size };
    })
    .sort((a, b) => b.reclaimable - a.reclaimable || a.objects[0]!.id.localeCompare(b.objects[0]!.id));
  return page(groups.slice(q.offset, q.offset + q.limit), groups.length, q.offset);
}

/**
 * A segment value shared by more pictures than this is not probed by the report: comparing each
 * with each would be quadratic (flat, dark or blank pictures crowd a few values). Identical
 * hashes are grouped before, so a pair is missed only when its sole close segments are crowded.
 */
export const CROWDED_SEGMENT = 2_000;

/** Largest first, then by key: the member a group keeps is its first. */
const keptFirst = (a: Hashed, b: Hashed) => b.size - a.size || a.key.localeCompare(b.key);

/**
 * A connected group split so that every member is alike to its group's first, the largest, which
 * a "keep one" clean-up keeps: pictures alike only through a chain of others (a gradient of
 * colours, a series of edits) would otherwise all be offered as copies of one they do not look
 * like. The largest takes what is alike to it; the rest split again. Groups of one are dropped.
 */
export function aroundLargest(component: Hashed[], radius: number): Hashed[][] {
  const out: Hashed[][] = [];
  let left = [...component].sort(keptFirst);
  while (left.length > 1) {
    const [kept, ...others] = left as [Hashed, ...Hashed[]];
    const group = [kept];
    const rest: Hashed[] = [];
    for (const o of others) (alike(kept, o, radius) ? group : rest).push(o);
    if (group.length > 1) out.push(group);
    left = rest;
  }
  return out;
}

/** The side of a cell of L*a*b* in which any two colours are within SAME_PICTURE_DELTA_E (its diagonal). */
const COLOR_CELL = SAME_PICTURE_DELTA_E / Math.sqrt(3);

/** Hash and colour cell: items with one key are alike without comparing them. */
function sameKey(it: Hashed): string {
  const cell = it.lab ? [it.lab.l, it.lab.a, it.lab.b].map((v) => Math.floor(v / COLOR_CELL)).join(",") : "-";
  return `${it.hi}:${it.lo}:${cell}`;
}

/** Two pictures are alike when their hashes are within `radius` bits and their colours close (or either unknown). */
function alike(p: Hashed, q: Hashed, radius: number): boolean {
  if (popcount32(p.hi ^ q.hi) + popcount32(p.lo ^ q.lo) > radius) return false;
  return !p.lab || !q.lab || deltaE(p.lab, q.lab) <= SAME_PICTURE_DELTA_E;
}

/** Connected groups (two or more) of alike items, found by segment probes. */
export function groupNear(all: Hashed[], radius: number): Hashed[][] {
  // Identical hashes of one colour first: one representative each takes part in the probes.
  const same = new Map<string, Hashed[]>();
  for (const it of all) {
    const k = sameKey(it);
    const list = same.get(k);
    if (list) list.push(it);
    else same.set(k, [it]);
  }
  const items = [...same.values()].map((l) => l[0]!);
  const near = groupDistinct(items, radius);
  const grouped = new Set(near.flat());
  const out = near.map((g) => g.flatMap((rep) => same.get(sameKey(rep))!));
  for (const rep of items) if (!grouped.has(rep) && same.get(sameKey(rep))!.length > 1) out.push(same.get(sameKey(rep))!);
  return out;
}

/**
 * Union-find over the items, joining each pair the segment probes find alike. Per segment the
 * items are sorted by value into flat arrays (a counting sort over the 65,536 values), so a
 * probe is two array reads: a million pictures take seconds, not minutes of map lookups.
 */
function groupDistinct(items: Hashed[], radius: number): Hashed[][] {
  const n = items.length;
  const parent = new Int32Array(n);
  for (let i = 0; i < n; i++) parent[i] = i;
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const hi = Uint32Array.from(items, (it) => it.hi);
  const lo = Uint32Array.from(items, (it) => it.lo);
  // The values within reach of a segment's are its own XOR each of these.
  const masks = segmentNeighbours(0, Math.floor(radius / SEGMENTS));
  const values = new Uint16Array(n);
  const start = new Int32Array(65_537);
  const sorted = new Int32Array(n);
  for (let s = 0; s < SEGMENTS; s++) {
    const word = s < 2 ? hi : lo;
    const shift = s % 2 === 0 ? 16 : 0;
    start.fill(0);
    for (let i = 0; i < n; i++) {
      values[i] = (word[i]! >>> shift) & 0xffff;
      start[values[i]! + 1]!++;
    }
    for (let v = 0; v < 65_536; v++) start[v + 1]! += start[v]!;
    const next = start.slice(0, 65_536);
    for (let i = 0; i < n; i++) sorted[next[values[i]!]!++] = i;
    // Each pair of values within reach once (v below its neighbour, or v itself), each pair of their items once.
    for (let v = 0; v < 65_536; v++) {
      const from = start[v]!;
      const to = start[v + 1]!;
      if (to === from || to - from > CROWDED_SEGMENT) continue;
      for (const mask of masks) {
        const w = v ^ mask;
        if (w < v) continue;
        const wTo = start[w + 1]!;
        if (wTo - start[w]! > CROWDED_SEGMENT) continue;
        for (let a = from; a < to; a++) {
          const i = sorted[a]!;
          for (let b = w === v ? a + 1 : start[w]!; b < wTo; b++) {
            const j = sorted[b]!;
            if (popcount32(hi[i]! ^ hi[j]!) + popcount32(lo[i]! ^ lo[j]!) > radius) continue;
            const ri = root(i);
            const rj = root(j);
            if (ri !== rj && alike(items[i]!, items[j]!, radius)) parent[rj] = ri;
          }
        }
      }
    }
  }
  const byRoot = new Map<number, Hashed[]>();
  items.forEach((it, i) => {
    const r = root(i);
    const group = byRoot.get(r);
    if (group) group.push(it);
    else byRoot.set(r, [it]);
  });
  return [...byRoot.values()].filter((g) => g.length > 1);
}
