import { and, asc, count, eq, ilike, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { Tag } from "../../contract/labels.ts";
import { mediaObjects, objectTags, tags } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import type { Deps } from "../core/deps.ts";
import { readDb } from "../core/reads.ts";
import { errors } from "../core/errors.ts";
import { tagKind } from "./kinds.ts";
import { replaceObjectLabels } from "./labels.ts";
import { countedObjects } from "../media/object-refs.ts";
import type { ObjectStored } from "../media/lifecycle.ts";
import { type Page, page } from "../core/pagination.ts";
import { escapeLike, slugify, slugOrThrow } from "./slug.ts";

/** Upload labels may have up to 128 characters and become tags, so a tag name is held to the same. */
export const MAX_TAG_NAME = 128;
/** Most tags one object can carry (ours). */
export const MAX_TAGS_PER_OBJECT = 100;

type TagRow = typeof tags.$inferSelect;

const view = (t: TagRow, objectCount: number): Tag => ({
  id: t.id,
  name: t.name,
  slug: t.slug,
  objectCount,
  createdAt: t.createdAt.toISOString(),
});

export async function listTags(
  deps: Deps,
  caller: Caller,
  q: { search?: string | undefined; limit: number; offset: number },
): Promise<Page<Tag>> {
  deps = { ...deps, db: readDb(deps, caller.orgId) };
  const conditions: SQL[] = [eq(tags.orgId, caller.orgId)];
  const search = q.search?.trim();
  if (search) {
    const pattern = `%${escapeLike(search)}%`;
    // The slug form matches too, so "new york" finds the tag "New-York".
    const slugPattern = `%${escapeLike(slugify(search) || search)}%`;
    conditions.push(or(ilike(tags.name, pattern), ilike(tags.slug, slugPattern)) as SQL);
  }
  const where = and(...conditions);
  const [rows, [{ total } = { total: 0 }]] = await Promise.all([
    deps.db
      .select({ tag: tags, objectCount: count(mediaObjects.id) })
      .from(tags)
      .leftJoin(objectTags, and(eq(objectTags.tagId, tags.id), eq(objectTags.orgId, caller.orgId)))
      .leftJoin(mediaObjects, countedObjects(caller, objectTags.objectId))
      .where(where)
      .groupBy(tags.id)
      .orderBy(asc(tags.slug), asc(tags.id))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.select({ total: count() }).from(tags).where(where),
  ]);
  return page(rows.map((r) => view(r.tag, r.objectCount)), total, q.offset);
}

/** A tag is its slug: a second name with the same slug is 409 with the existing tag's id. */
export async function createTag(deps: Deps, caller: Caller, input: { name: string }): Promise<Tag> {
  const slug = slugOrThrow(input.name, "name");
  for (let attempt = 0; attempt < 3; attempt++) {
    const [row] = await deps.db
      .insert(tags)
      .values({ orgId: caller.orgId, name: input.name, slug, createdAt: deps.clock.now() })
      .onConflictDoNothing({ target: [tags.orgId, tags.slug] })
      .returning();
    if (row) return view(row, 0);
    const [existing] = await deps.db
      .select({ id: tags.id, name: tags.name })
      .from(tags)
      .where(and(eq(tags.orgId, caller.orgId), eq(tags.slug, slug)));
    // Deleted between the two statements: try again.
    if (!existing) continue;
    throw errors.conflict(`A tag with slug '${slug}' already exists ('${existing.name}'); use its id`, { existingId: existing.id, slug });
  }
  throw errors.conflict(`The tag '${input.name}' is being changed concurrently; retry`);
}

/** Labels given at upload become the object's tags (created on first use), replacing any it had. */
export async function applyUploadTags(e: ObjectStored): Promise<void> {
  if (e.uploadTags.length === 0) return;
  await replaceObjectLabels(e.tx, tagKind, e.orgId, e.object.id, await ensureTagsByName(e.tx, e.orgId, e.uploadTags));
}

/**
 * Ids of the tags with these names, creating the missing ones (upload labels become tags on
 * first use). Names are matched by slug, so "Summer Sale" and "summer-sale" are one tag; the
 * first spelling seen names a new tag. Result: one id per distinct slug, in first-seen order.
 * Safe under concurrency: `on conflict do update` returns the row whoever inserted it, and rows
 * are inserted in slug order so that concurrent calls cannot deadlock.
 * A name without any letter or digit is a validation error (path `tags.<index>`).
 */
export async function ensureTagsByName(tx: Db, orgId: string, names: string[]): Promise<string[]> {
  const bySlug = new Map<string, string>();
  names.forEach((raw, i) => {
    const name = raw.trim();
    const slug = slugify(name);
    if (!slug || name.length > MAX_TAG_NAME) {
      throw errors.validation([{ path: `tags.${i}`, message: `A tag needs a letter or digit and at most ${MAX_TAG_NAME} characters` }]);
    }
    if (!bySlug.has(slug)) bySlug.set(slug, name);
  });
  if (bySlug.size === 0) return [];
  const rows = await tx
    .insert(tags)
    // Sorted, so concurrent calls take the slugs' index locks in one order and cannot deadlock.
    .values([...bySlug].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([slug, name]) => ({ orgId, name, slug })))
    // A no-op update (the slug is the conflict key) so that existing rows are returned too.
    .onConflictDoUpdate({ target: [tags.orgId, tags.slug], set: { slug: sql`excluded.slug` } })
    .returning({ id: tags.id, slug: tags.slug });
  const idOf = new Map(rows.map((r) => [r.slug, r.id]));
  return [...bySlug.keys()].map((slug) => idOf.get(slug)!);
}
