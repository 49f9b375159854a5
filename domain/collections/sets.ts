import { and, asc, count, eq, inArray, isNull, or, sql } from "drizzle-orm";
import { type Db, rowsOf } from "../../db/client.ts";
import type { Deleted } from "../../contract/common.ts";
import type { MediaSet, SetGeneration, SetItem, SetItemSource, SetRendition, SetSummary } from "../../contract/sets.ts";
import { mediaObjects, mediaSetItems, mediaSets } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import { deleteOwned, findOwned, type Owned, visiblePage } from "../access/owned-rows.ts";
import type { Deps } from "../core/deps.ts";
import { AppError, errors } from "../core/errors.ts";
import { enqueueJob } from "../core/jobs.ts";
import { resolveLiveObject } from "../media/object-refs.ts";
import { childCount } from "./child-count.ts";
import { type Page, page } from "../core/pagination.ts";

/** Limits of ours (docs/conventions.md#limits-of-ours). */
export const MAX_SET_ITEMS = 100;
export const MAX_RENDITION_SIDE = 16384;
/**
 * CPU bounds of `generate` (2026 attack run: one 12000×12000 item ran 4.5 min on both cores and a
 * hundred of them fit in a set). One rendition is at most 40 megapixels (8000×5000, 6324²),
 * the generated items of one set at most 400 megapixels together, and one organization may
 * ask for at most 60 generations an hour. The worker refuses what slips past (an item added
 * before these limits existed) and any encoded rendition over 64 MiB. Of the sixty an hour, at
 * most 40 megapixels of renditions a minute on average.
 */
export const MAX_RENDITION_PIXELS = 40_000_000;
export const MAX_SET_RENDER_PIXELS = 400_000_000;
export const MAX_RENDITION_BYTES = 64 * 1024 ** 2;
export const MAX_GENERATIONS_PER_HOUR = 60;
/**
 * Megapixels of renditions one organization may ask for, on average, per minute. A generation
 * of P pixels needs the last ceil(P / rate) minutes (at least one) to hold no more than that
 * many minutes' worth with it: small sets pass several a minute, and the largest set (400
 * megapixels) waits for ten quiet minutes instead of going over the rate.
 */
export const GENERATION_PIXELS_PER_MINUTE = 40_000_000;
/** `W:H`, positive integers without leading zeros. */
export const ASPECT_RATIO = /^([1-9][0-9]{0,4}):([1-9][0-9]{0,4})$/;
/** How far width:height may stray from the aspect ratio (rounding, "21:9" at 2560x1080). */
const RATIO_TOLERANCE = 0.02;

type SetRow = typeof mediaSets.$inferSelect;
type ItemRow = typeof mediaSetItems.$inferSelect;

const summary = (s: SetRow, baseObjectDeleted: boolean, itemCount: number): SetSummary => ({
  id: s.id,
  name: s.name,
  bucketId: s.bucketId,
  baseObjectId: s.baseObjectId,
  baseObjectDeleted,
  itemCount,
  generateRequestedAt: s.generateRequestedAt?.toISOString() ?? null,
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
});

const itemView = (i: ItemRow, objectDeleted: boolean): SetItem => ({
  id: i.id,
  setId: i.setId,
  objectId: i.objectId,
  objectDeleted,
  source: i.source,
  aspectRatio: i.aspectRatio,
  width: i.width,
  height: i.height,
  role: i.role,
  // A failure is news only once the generation it belongs to has settled (generate clears both).
  renderError: i.renderedAt === null ? null : i.renderError,
  createdAt: i.createdAt.toISOString(),
});

/** A set lives in its base object's bucket; restricted keys see the sets of their bucket only. */
const owned: Owned = { table: mediaSets, id: mediaSets.id, org: mediaSets.orgId, bucket: mediaSets.bucketId, createdAt: mediaSets.createdAt, noun: "Set", what: "The set" };

/** The set in the caller's organization (404) and bucket (403), optionally locked for the transaction. */
const resolveSet = (db: Db, caller: Caller, id: string, lock = false) => findOwned<SetRow>(db, caller, owned, id, lock);

const itemCount = childCount(mediaSetItems, and(eq(mediaSetItems.setId, mediaSets.id), eq(mediaSetItems.orgId, mediaSets.orgId)));

export async function listSets(deps: Deps, caller: Caller, q: { limit: number; offset: number }): Promise<Page<SetSummary>> {
  const { rows, total } = await visiblePage(
    deps.db,
    caller,
    owned,
    deps.db
      .select({ set: mediaSets, baseDeletedAt: mediaObjects.deletedAt, itemCount })
      .from(mediaSets)
      .leftJoin(mediaObjects, and(eq(mediaObjects.id, mediaSets.baseObjectId), eq(mediaObjects.orgId, mediaSets.orgId)))
      .$dynamic(),
    q,
  );
  return page(rows.map((r) => summary(r.set, r.baseDeletedAt !== null, r.itemCount)), total, q.offset);
}

async function loadSetView(db: Db, set: SetRow): Promise<MediaSet> {
  const [base, items] = await Promise.all([
    db
      .select({ deletedAt: mediaObjects.deletedAt })
      .from(mediaObjects)
      .where(and(eq(mediaObjects.id, set.baseObjectId), eq(mediaObjects.orgId, set.orgId))),
    db
      .select({ item: mediaSetItems, objectDeletedAt: mediaObjects.deletedAt })
      .from(mediaSetItems)
      .leftJoin(mediaObjects, and(eq(mediaObjects.id, mediaSetItems.objectId), eq(mediaObjects.orgId, mediaSetItems.orgId)))
      .where(and(eq(mediaSetItems.setId, set.id), eq(mediaSetItems.orgId, set.orgId)))
      .orderBy(asc(mediaSetItems.createdAt), asc(mediaSetItems.id)),
  ]);
  return {
    ...summary(set, (base[0]?.deletedAt ?? null) !== null, items.length),
    items: items.map((r) => itemView(r.item, r.objectDeletedAt !== null)),
  };
}

export async function createSet(deps: Deps, caller: Caller, input: { name: string; baseObjectId: string }): Promise<MediaSet> {
  const base = await resolveLiveObject(deps.db, caller, input.baseObjectId, { what: "Base object" });
  const now = deps.clock.now();
  const [row] = await deps.db
    .insert(mediaSets)
    .values({ orgId: caller.orgId, bucketId: base.bucketId, name: input.name, baseObjectId: base.id, createdAt: now, updatedAt: now })
    .returning();
  return { ...summary(row!, false, 0), items: [] };
}

export async function getSet(deps: Deps, caller: Caller, id: string): Promise<MediaSet> {
  return loadSetView(deps.db, await resolveSet(deps.db, caller, id));
}

/** Deletes the set and its items; the media objects they point at stay. */
export async function deleteSet(deps: Deps, caller: Caller, id: string): Promise<Deleted> {
  return deleteOwned(deps.db, caller, owned, id);
}

export interface NewSetItem {
  objectId?: string | undefined;
  aspectRatio: string;
  width: number;
  height: number;
  role: string;
}

/**
 * With `objectId`: an existing rendition is attached (a live object of the set's bucket) and
 * `generate` leaves it alone. Without: the item describes a rendition for `generate` to render
 * from the base object; its `objectId` stays null until the worker records the result.
 */
export async function addSetItem(deps: Deps, caller: Caller, setId: string, input: NewSetItem): Promise<SetItem> {
  checkRatio(input);
  // Only a generated item is rendered; an attached one's size merely describes it.
  if (!input.objectId && input.width * input.height > MAX_RENDITION_PIXELS) {
    throw errors.validation([
      { path: "width", message: `${input.width}x${input.height} is ${(input.width * input.height / 1e6).toFixed(1)} megapixels; a generated rendition is at most ${MAX_RENDITION_PIXELS / 1e6}` },
    ]);
  }
  return deps.db.transaction(async (tx) => {
    // Locked so that concurrent adds cannot overrun the item limit.
    const set = await resolveSet(tx, caller, setId, true);
    const [{ n } = { n: 0 }] = await tx
      .select({ n: count() })
      .from(mediaSetItems)
      .where(and(eq(mediaSetItems.setId, set.id), eq(mediaSetItems.orgId, caller.orgId)));
    if (n >= MAX_SET_ITEMS) throw errors.conflict(`A set holds at most ${MAX_SET_ITEMS} items`, { limit: MAX_SET_ITEMS });
    if (!input.objectId) {
      const [{ pixels } = { pixels: 0 }] = await tx
        .select({ pixels: sql<number>`coalesce(sum(${mediaSetItems.width}::bigint * ${mediaSetItems.height}), 0)::float8` })
        .from(mediaSetItems)
        .where(and(eq(mediaSetItems.setId, set.id), eq(mediaSetItems.orgId, caller.orgId), renderable));
      if (Number(pixels) + input.width * input.height > MAX_SET_RENDER_PIXELS) {
        throw errors.conflict(`The generated items of a set may total at most ${MAX_SET_RENDER_PIXELS / 1e6} megapixels`, {
          limit: MAX_SET_RENDER_PIXELS,
          used: Number(pixels),
        });
      }
    }
    let source: SetItemSource = "generated";
    if (input.objectId) {
      const object = await resolveLiveObject(tx, caller, input.objectId);
      if (object.bucketId !== set.bucketId) {
        throw errors.validation([{ path: "objectId", message: "The object must be in the same bucket as the set's base object" }]);
      }
      source = "attached";
    }
    const now = deps.clock.now();
    const [row] = await tx
      .insert(mediaSetItems)
      .values({
        orgId: caller.orgId,
        setId: set.id,
        objectId: input.objectId ?? null,
        source,
        aspectRatio: input.aspectRatio,
        width: input.width,
        height: input.height,
        role: input.role,
        createdAt: now,
      })
      .returning();
    await tx.update(mediaSets).set({ updatedAt: now }).where(and(eq(mediaSets.id, set.id), eq(mediaSets.orgId, set.orgId)));
    return itemView(row!, false);
  });
}

/** Width and height must describe the aspect ratio (within 2%), so a renderer has one answer. */
function checkRatio(input: Pick<NewSetItem, "aspectRatio" | "width" | "height">): void {
  const m = ASPECT_RATIO.exec(input.aspectRatio);
  if (!m) throw errors.validation([{ path: "aspectRatio", message: "Expected W:H with positive integers, e.g. 16:9" }]);
  const ratio = Number(m[1]) / Number(m[2]);
  const actual = input.width / input.height;
  if (Math.abs(actual / ratio - 1) > RATIO_TOLERANCE) {
    throw errors.validation([
      { path: "height", message: `${input.width}x${input.height} does not match the aspect ratio ${input.aspectRatio}` },
    ]);
  }
}

/** Removes the item; an object it pointed at (attached or generated) stays. */
export async function removeSetItem(deps: Deps, caller: Caller, setId: string, itemId: string): Promise<Deleted> {
  return deps.db.transaction(async (tx) => {
    const set = await resolveSet(tx, caller, setId, true);
    const removed = await tx
      .delete(mediaSetItems)
      .where(and(eq(mediaSetItems.id, itemId), eq(mediaSetItems.setId, set.id), eq(mediaSetItems.orgId, caller.orgId)))
      .returning({ id: mediaSetItems.id });
    if (removed.length === 0) throw errors.notFound("Set item");
    await tx.update(mediaSets).set({ updatedAt: deps.clock.now() }).where(and(eq(mediaSets.id, set.id), eq(mediaSets.orgId, set.orgId)));
    return { id: itemId, deleted: true as const };
  });
}

/**
 * What `generate` renders: every "generated" item, whether it has a rendition yet or not
 * (regenerating replaces the previous rendition), and any item left without an object (an
 * attached object that was purged). Items with an attached object are never touched.
 */
const renderable = or(eq(mediaSetItems.source, "generated"), isNull(mediaSetItems.objectId));

/** 202: the work runs in the worker. 409 when the base object was deleted. */
export async function generateSet(deps: Deps, caller: Caller, setId: string): Promise<QueuedGeneration> {
  const accepted = await deps.db.transaction(async (tx) => {
    const set = await resolveSet(tx, caller, setId, true);
    const [base] = await tx
      .select({ deletedAt: mediaObjects.deletedAt, kind: mediaObjects.kind })
      .from(mediaObjects)
      .where(and(eq(mediaObjects.id, set.baseObjectId), eq(mediaObjects.orgId, set.orgId)));
    if (!base || base.deletedAt) throw errors.conflict("The set's base object was deleted; there is nothing to render from");
    if (!RENDERABLE_KINDS.has(base.kind)) {
      throw errors.conflict(`Renditions are cut from images, videos (their poster frame) and PDFs (their first page), not from ${base.kind} files`);
    }
    const now = deps.clock.now();
    // The items' last outcome is cleared, so that a caller waiting on this generation sees
    // only what this job (or a later one) records; a refusal below rolls it back.
    const items = await tx
      .update(mediaSetItems)
      .set({ renderedAt: null, renderError: null })
      .where(and(eq(mediaSetItems.setId, set.id), eq(mediaSetItems.orgId, caller.orgId), renderable))
      .returning({ id: mediaSetItems.id, width: mediaSetItems.width, height: mediaSetItems.height });
    const pixels = items.reduce((n, i) => n + i.width * i.height, 0);
    await checkGenerationRate(tx, caller.orgId, pixels);
    await tx
      .update(mediaSets)
      .set({ generateRequestedAt: now, updatedAt: now })
      .where(and(eq(mediaSets.id, set.id), eq(mediaSets.orgId, set.orgId)));
    const jobId = await enqueueJob(tx, "sets.generate", { orgId: caller.orgId, setId: set.id, pixels });
    return { setId: set.id, jobId, status: "queued" as const, items: items.length, itemIds: items.map((i) => i.id) };
  });
  deps.jobs.kick();
  return accepted;
}

/** What generateSet answers, plus the items it queued (for awaitGeneration). */
export type QueuedGeneration = SetGeneration & { itemIds: string[] };

/** How long a call may wait for a generation (domain/collections/sets.ts#awaitGeneration). */
export const MAX_GENERATION_WAIT_MS = 120_000;

/**
 * Waits until every item `generateSet` queued is settled (made or failed) or `deadline`
 * (epoch ms) passes, then answers the generation with each item's outcome: `settled`, or
 * `timed_out` with the items not settled yet as pending. `onProgress` hears items settled of
 * the total whenever that number grows. An item removed meanwhile counts as failed.
 */
export async function awaitGeneration(
  deps: Deps,
  queued: QueuedGeneration,
  opts: { orgId: string; deadline: number; onProgress?: (done: number, total: number, message: string) => void; pollMs?: number },
): Promise<SetGeneration> {
  const { itemIds, ...generation } = queued;
  let renditions: SetRendition[] = [];
  let reported = -1;
  for (;;) {
    const rows = itemIds.length
      ? await deps.db
          .select()
          .from(mediaSetItems)
          .where(and(inArray(mediaSetItems.id, itemIds), eq(mediaSetItems.setId, queued.setId), eq(mediaSetItems.orgId, opts.orgId)))
          .orderBy(asc(mediaSetItems.createdAt), asc(mediaSetItems.id))
      : [];
    const found = new Set(rows.map((r) => r.id));
    renditions = [
      ...rows.map(renditionView),
      ...itemIds
        .filter((i) => !found.has(i))
        .map((itemId): SetRendition => ({ itemId, role: "", width: 0, height: 0, state: "failed", objectId: null, error: "The item was removed from the set" })),
    ];
    const done = renditions.filter((r) => r.state !== "pending").length;
    if (done > reported) {
      reported = done;
      opts.onProgress?.(done, itemIds.length, `${done} of ${itemIds.length} renditions settled`);
    }
    if (done === itemIds.length) return { ...generation, status: "settled", renditions };
    if (Date.now() >= opts.deadline) return { ...generation, status: "timed_out", renditions };
    await Bun.sleep(Math.min(opts.pollMs ?? 250, Math.max(0, opts.deadline - Date.now())));
  }
}

const renditionView = (i: ItemRow): SetRendition => ({
  itemId: i.id,
  role: i.role,
  width: i.width,
  height: i.height,
  state: i.renderedAt === null ? "pending" : i.renderError === null ? "made" : "failed",
  objectId: i.renderedAt !== null && i.renderError === null ? i.objectId : null,
  error: i.renderedAt === null ? null : i.renderError,
});

/**
 * At most MAX_GENERATIONS_PER_HOUR `sets.generate` jobs per organization in the last hour, and
 * `pixels` more only while the minutes it spans at GENERATION_PIXELS_PER_MINUTE hold them with
 * what was asked for in those minutes, counted from the job outbox (rows are kept a week). The
 * organization is locked for the count (a transaction-scoped advisory lock) so concurrent calls
 * cannot all pass. The pixel rate spreads the hour's generations out: asked for back to back,
 * they kept the worker's picture process busy for minutes, and another organization's p99 went
 * to 5-12x its quiet value; at one such set a minute, 2-3x (bench/notes/2026-11-27-neighbours-sittings.md).
 */
async function checkGenerationRate(tx: Db, orgId: string, pixels: number): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`sets.generate:${orgId}`}))`);
  const minutes = Math.max(1, Math.ceil(pixels / GENERATION_PIXELS_PER_MINUTE));
  const window = sql`(${minutes}::int * interval '1 minute')`;
  const since = sql`now() - ${window}`;
  // The outbox stamps rows with the database's clock, so the windows are on that clock too.
  const rows = rowsOf<{ n: number; hour_wait: number | string | null; recent: number | string | null; recent_wait: number | string | null }>(
    await tx.execute(sql`
      select count(*)::int as n,
        extract(epoch from min(created_at) + interval '1 hour' - now())::float8 as hour_wait,
        sum(coalesce((payload->>'pixels')::bigint, 0)) filter (where created_at > ${since}) as recent,
        extract(epoch from min(created_at) filter (where created_at > ${since}) + ${window} - now())::float8 as recent_wait
      from job_outbox
      where name = 'sets.generate' and payload->>'orgId' = ${orgId} and created_at > now() - interval '1 hour'`),
  );
  const { n = 0, hour_wait = null, recent = null, recent_wait = null } = rows[0] ?? {};
  const refuse = (what: string, wait: number | string | null, fallback: number) => {
    const err = new AppError("rate_limited", `An organization may ask for at most ${what}; retry after the number of seconds in Retry-After`);
    err.retryAfterSeconds = Math.max(1, Math.ceil(Number(wait ?? fallback)));
    return err;
  };
  if (n >= MAX_GENERATIONS_PER_HOUR) throw refuse(`${MAX_GENERATIONS_PER_HOUR} set generations an hour`, hour_wait, 3600);
  const asked = Number(recent ?? 0);
  if (asked + pixels > minutes * GENERATION_PIXELS_PER_MINUTE) {
    const mp = (x: number) => Math.round(x / 1_000_000);
    throw refuse(
      `${mp(GENERATION_PIXELS_PER_MINUTE)} megapixels of set renditions a minute (this generation: ${mp(pixels)}; asked for in the last ${minutes === 1 ? "minute" : `${minutes} minutes`}: ${mp(asked)})`,
      recent_wait,
      60 * minutes,
    );
  }
}

/** Kinds renditions can be cut from: an image, a video's poster frame, a PDF's first page. */
export const RENDERABLE_KINDS = new Set(["image", "video", "pdf"]);

/**
 * Where an item's rendition is stored in the base object's bucket: always the same key for
 * the same item, so regenerating overwrites it (one media object per item, never duplicates).
 */
export function renditionKey(baseKey: string, item: { id: string; setId: string; role: string; width: number; height: number }): string {
  const role = item.role.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40) || "item";
  return `variants/${item.setId}/${role}-${item.width}x${item.height}-${item.id.slice(0, 8)}.webp`;
}

// For the worker: the items a `sets.generate` job renders, and how it records a result.
export async function itemsToGenerate(db: Db, orgId: string, setId: string): Promise<ItemRow[]> {
  return db
    .select()
    .from(mediaSetItems)
    .where(and(eq(mediaSetItems.setId, setId), eq(mediaSetItems.orgId, orgId), renderable))
    .orderBy(asc(mediaSetItems.createdAt), asc(mediaSetItems.id));
}

/**
 * Records a rendered object on an item (which is "generated" from then on); false when the
 * item is gone (removed meanwhile) or has an attached object again.
 */
export async function recordGeneratedItem(db: Db, orgId: string, itemId: string, objectId: string, at: Date): Promise<boolean> {
  const updated = await db
    .update(mediaSetItems)
    .set({ objectId, source: "generated", renderedAt: at, renderError: null })
    .where(and(eq(mediaSetItems.id, itemId), eq(mediaSetItems.orgId, orgId), renderable))
    .returning({ id: mediaSetItems.id });
  return updated.length > 0;
}

/**
 * Records that the worker gave up on these items (all the set's unsettled renderable items
 * when `itemIds` is omitted), so that a caller waiting on the generation is answered. An item
 * already settled by this generation keeps its outcome.
 */
export async function recordItemsFailed(db: Db, orgId: string, setId: string, error: string, at: Date, itemIds?: string[]): Promise<void> {
  if (itemIds && itemIds.length === 0) return;
  await db
    .update(mediaSetItems)
    .set({ renderedAt: at, renderError: error })
    .where(
      and(
        eq(mediaSetItems.setId, setId),
        eq(mediaSetItems.orgId, orgId),
        renderable,
        isNull(mediaSetItems.renderedAt),
        ...(itemIds ? [inArray(mediaSetItems.id, itemIds)] : []),
      ),
    );
}
