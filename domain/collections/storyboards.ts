import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Deleted } from "../../contract/common.ts";
import type { Clip, Storyboard, StoryboardSummary } from "../../contract/storyboards.ts";
import { mediaObjects, storyboardClips, storyboards } from "../../db/schema/index.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import { childCount } from "./child-count.ts";
import type { Caller } from "../access/caller.ts";
import { deleteOwned, findOwned, type Owned, visiblePage } from "../access/owned-rows.ts";
import type { Deps } from "../core/deps.ts";
import { type ErrorDetail, errors } from "../core/errors.ts";
import { resolveLiveObject } from "../media/object-refs.ts";
import { type Page, page } from "../core/pagination.ts";

/** Limits of ours (docs/conventions.md#limits-of-ours). */
export const MAX_CLIPS = 1000;
export const MAX_NOTE = 2000;

type StoryboardRow = typeof storyboards.$inferSelect;
type ClipRow = typeof storyboardClips.$inferSelect & { objectDeletedAt: Date | null };

const summary = (s: StoryboardRow, clipCount: number): StoryboardSummary => ({
  id: s.id,
  name: s.name,
  bucketId: s.bucketId,
  clipCount,
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
});

// The position shown is the index in stored order, so the view stays dense even if a purged
// object took its clip with it (foreign-key cascade) and left a gap the next mutation closes.
const clipView = (c: ClipRow, position: number): Clip => ({
  id: c.id,
  storyboardId: c.storyboardId,
  objectId: c.objectId,
  position,
  note: c.note,
  objectDeleted: c.objectDeletedAt !== null,
  createdAt: c.createdAt.toISOString(),
});

/** A bucket-restricted key sees only storyboards bound to its bucket. */
const owned: Owned = { table: storyboards, id: storyboards.id, org: storyboards.orgId, bucket: storyboards.bucketId, createdAt: storyboards.createdAt, noun: "Storyboard", what: "The storyboard" };

/**
 * The storyboard in the caller's organization (404), usable by the caller's key (403).
 * `lock`: every mutation takes the row lock first, so changes to one storyboard's clips run
 * one after another and positions can be computed from what is read.
 */
const resolveStoryboard = (db: Db, caller: Caller, id: string, lock = false) => findOwned<StoryboardRow>(db, caller, owned, id, lock);

async function loadClips(db: Db, sb: StoryboardRow): Promise<ClipRow[]> {
  const rows = await db
    .select({ clip: storyboardClips, objectDeletedAt: mediaObjects.deletedAt })
    .from(storyboardClips)
    .leftJoin(mediaObjects, and(eq(mediaObjects.id, storyboardClips.objectId), eq(mediaObjects.orgId, storyboardClips.orgId)))
    .where(and(eq(storyboardClips.storyboardId, sb.id), eq(storyboardClips.orgId, sb.orgId)))
    .orderBy(asc(storyboardClips.position), asc(storyboardClips.id));
  return rows.map((r) => ({ ...r.clip, objectDeletedAt: r.objectDeletedAt }));
}

async function loadView(db: Db, sb: StoryboardRow): Promise<Storyboard> {
  const clips = await loadClips(db, sb);
  return { ...summary(sb, clips.length), clips: clips.map(clipView) };
}

/**
 * Stores `orderedIds[i]` at position i, touching only clips that move. The unique index on
 * (storyboard, position) is not deferrable, so PostgreSQL checks it row by row during an
 * UPDATE: moving clips are first parked on distinct negative positions (-1 - target), then
 * set to their targets, which no clip holds any more. Works the same on postgres.js and PGlite.
 * Runs under the storyboard's row lock.
 */
async function writeOrder(tx: Db, sb: StoryboardRow, current: Map<string, number>, orderedIds: string[]): Promise<void> {
  const moving = orderedIds.map((id, to) => ({ id, to })).filter((m) => current.get(m.id) !== m.to);
  if (moving.length === 0) return;
  const positions = (target: (to: number) => number) =>
    sql`case ${storyboardClips.id} ${sql.join(
      moving.map((m) => sql`when ${m.id}::uuid then ${target(m.to)}::integer`),
      sql` `,
    )} end`;
  const where = and(
    eq(storyboardClips.storyboardId, sb.id),
    eq(storyboardClips.orgId, sb.orgId),
    inArray(
      storyboardClips.id,
      moving.map((m) => m.id),
    ),
  );
  await tx.update(storyboardClips).set({ position: positions((to) => -1 - to) }).where(where);
  await tx.update(storyboardClips).set({ position: positions((to) => to) }).where(where);
}

const positionsOf = (clips: ClipRow[]) => new Map(clips.map((c) => [c.id, c.position]));

async function touch(tx: Db, deps: Deps, sb: StoryboardRow): Promise<StoryboardRow> {
  const [row] = await tx
    .update(storyboards)
    .set({ updatedAt: deps.clock.now() })
    .where(and(eq(storyboards.id, sb.id), eq(storyboards.orgId, sb.orgId)))
    .returning();
  return row!;
}

const clipCount = childCount(storyboardClips, and(eq(storyboardClips.storyboardId, storyboards.id), eq(storyboardClips.orgId, storyboards.orgId)));

export async function listStoryboards(deps: Deps, caller: Caller, q: { limit: number; offset: number }): Promise<Page<StoryboardSummary>> {
  const { rows, total } = await visiblePage(deps.db, caller, owned, deps.db.select({ sb: storyboards, clipCount }).from(storyboards).$dynamic(), q);
  return page(rows.map((r) => summary(r.sb, r.clipCount)), total, q.offset);
}

/**
 * `bucketId` binds the storyboard to a bucket: its clips must come from there, and keys
 * restricted to that bucket can use it. A bucket-restricted key always creates storyboards
 * bound to its bucket.
 */
export async function createStoryboard(
  deps: Deps,
  caller: Caller,
  input: { name: string; bucketId?: string | undefined },
): Promise<Storyboard> {
  const bucketId = input.bucketId ?? caller.bucketId;
  if (bucketId) await resolveBucket(deps, caller, bucketId);
  const now = deps.clock.now();
  const [row] = await deps.db
    .insert(storyboards)
    .values({ orgId: caller.orgId, bucketId: bucketId ?? null, name: input.name, createdAt: now, updatedAt: now })
    .returning();
  return { ...summary(row!, 0), clips: [] };
}

export async function getStoryboard(deps: Deps, caller: Caller, id: string): Promise<Storyboard> {
  return loadView(deps.db, await resolveStoryboard(deps.db, caller, id));
}

/** Deletes the storyboard and its clips; the media objects stay. */
export async function deleteStoryboard(deps: Deps, caller: Caller, id: string): Promise<Deleted> {
  return deleteOwned(deps.db, caller, owned, id);
}

/** Inserts at `position` (0..n, default n = append); the clips from there on move down one. */
export async function addClip(
  deps: Deps,
  caller: Caller,
  storyboardId: string,
  input: { objectId: string; position?: number | undefined; note?: string | undefined },
): Promise<Clip> {
  return deps.db.transaction(async (tx) => {
    const sb = await resolveStoryboard(tx, caller, storyboardId, true);
    const object = await resolveLiveObject(tx, caller, input.objectId);
    if (sb.bucketId && object.bucketId !== sb.bucketId) {
      throw errors.validation([{ path: "objectId", message: "The storyboard is bound to a bucket; the object is in another one" }]);
    }
    const clips = await loadClips(tx, sb);
    if (clips.length >= MAX_CLIPS) throw errors.conflict(`A storyboard holds at most ${MAX_CLIPS} clips`, { limit: MAX_CLIPS });
    const position = input.position ?? clips.length;
    if (position > clips.length) {
      throw errors.validation([{ path: "position", message: `Must be 0..${clips.length} (${clips.length} appends); the storyboard has ${clips.length} clip(s)` }]);
    }
    const [row] = await tx
      .insert(storyboardClips)
      // Parked below zero like every moving clip; writeOrder gives it its place.
      .values({ orgId: caller.orgId, storyboardId: sb.id, objectId: object.id, position: -1 - position, note: input.note ?? "", createdAt: deps.clock.now() })
      .returning();
    const order = clips.map((c) => c.id);
    order.splice(position, 0, row!.id);
    await writeOrder(tx, sb, new Map([...positionsOf(clips), [row!.id, row!.position]]), order);
    await touch(tx, deps, sb);
    return clipView({ ...row!, objectDeletedAt: null }, position);
  });
}

/**
 * `clipIds` must be exactly the storyboard's clips, each once. Anything else is
 * 400 with one detail per problem, and nothing changes. Answers the reordered storyboard.
 */
export async function reorderClips(deps: Deps, caller: Caller, storyboardId: string, clipIds: string[]): Promise<Storyboard> {
  return deps.db.transaction(async (tx) => {
    const sb = await resolveStoryboard(tx, caller, storyboardId, true);
    const clips = await loadClips(tx, sb);
    const known = new Set(clips.map((c) => c.id));
    const details: ErrorDetail[] = [];
    const seen = new Map<string, number>();
    clipIds.forEach((id, i) => {
      if (!known.has(id)) details.push({ path: `clipIds.${i}`, message: "Not a clip of this storyboard" });
      else if (seen.has(id)) details.push({ path: `clipIds.${i}`, message: `Duplicate of clipIds.${seen.get(id)}` });
      else seen.set(id, i);
    });
    for (const c of clips) if (!seen.has(c.id)) details.push({ path: "clipIds", message: `Missing clip ${c.id}` });
    if (details.length > 0) throw errors.validation(details, "clipIds must list every clip of the storyboard exactly once");
    await writeOrder(tx, sb, positionsOf(clips), clipIds);
    return loadView(tx, await touch(tx, deps, sb));
  });
}

/** Moving a clip to `position` (0..n-1) shifts the clips in between; `note` replaces the note. */
export async function updateClip(
  deps: Deps,
  caller: Caller,
  storyboardId: string,
  clipId: string,
  input: { position?: number | undefined; note?: string | undefined },
): Promise<Clip> {
  if (input.position === undefined && input.note === undefined) {
    throw errors.validation([{ path: "", message: "Give position, note or both" }]);
  }
  return deps.db.transaction(async (tx) => {
    const sb = await resolveStoryboard(tx, caller, storyboardId, true);
    const clips = await loadClips(tx, sb);
    const index = clips.findIndex((c) => c.id === clipId);
    if (index < 0) throw errors.notFound("Clip");
    let clip = clips[index]!;
    let position = index;
    if (input.position !== undefined) {
      if (input.position > clips.length - 1) {
        throw errors.validation([{ path: "position", message: `Must be 0..${clips.length - 1}; the storyboard has ${clips.length} clip(s)` }]);
      }
      const order = clips.map((c) => c.id);
      order.splice(index, 1);
      order.splice(input.position, 0, clipId);
      await writeOrder(tx, sb, positionsOf(clips), order);
      position = input.position;
    }
    if (input.note !== undefined) {
      const [row] = await tx
        .update(storyboardClips)
        .set({ note: input.note })
        .where(and(eq(storyboardClips.id, clipId), eq(storyboardClips.storyboardId, sb.id), eq(storyboardClips.orgId, sb.orgId)))
        .returning();
      clip = { ...row!, objectDeletedAt: clip.objectDeletedAt };
    }
    await touch(tx, deps, sb);
    return clipView(clip, position);
  });
}

/** Removes the clip; the clips after it move up one, so positions stay dense. */
export async function removeClip(deps: Deps, caller: Caller, storyboardId: string, clipId: string): Promise<Deleted> {
  return deps.db.transaction(async (tx) => {
    const sb = await resolveStoryboard(tx, caller, storyboardId, true);
    const clips = await loadClips(tx, sb);
    if (!clips.some((c) => c.id === clipId)) throw errors.notFound("Clip");
    await tx
      .delete(storyboardClips)
      .where(and(eq(storyboardClips.id, clipId), eq(storyboardClips.storyboardId, sb.id), eq(storyboardClips.orgId, sb.orgId)));
    const rest = clips.filter((c) => c.id !== clipId);
    await writeOrder(
      tx,
      sb,
      positionsOf(rest),
      rest.map((c) => c.id),
    );
    await touch(tx, deps, sb);
    return { id: clipId, deleted: true as const };
  });
}
