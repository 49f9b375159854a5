import { eq, ilike, isNull, type SQL, sql } from "drizzle-orm";
import type { MediaKind } from "../../contract/media.ts";
import { mediaObjects } from "../../db/schema/index.ts";
import type { Caller } from "../access/caller.ts";
import { resolveBucket } from "../buckets/buckets.ts";
import type { Deps } from "../core/deps.ts";
import { escapeLike } from "../labels/slug.ts";

/** The filters media_list and the bulk tools share, with tags and categories already resolved to slugs. */
export interface ObjectFilter {
  bucketId?: string | undefined;
  kind?: MediaKind | undefined;
  /** Part of the key, any case (the file name is the key's last segment, so this covers both). */
  search?: string | undefined;
  /** Keys starting with this, as given. */
  prefix?: string | undefined;
  tagSlugs: readonly string[];
  categorySlugs: readonly string[];
}

/** The ILIKE pattern of a key search: the term anywhere in the key, its wildcards literal. */
export function keyPattern(search: string): string {
  return `%${escapeLike(search)}%`;
}

/**
 * The conditions on media_objects for a filter: the caller's organization, live objects, the
 * bucket (the caller's own when a restricted key names none; 404 or 403 outside its reach), and
 * the same meaning as search's filters: every tag given, and each category or below it.
 */
export async function objectConditions(deps: Deps, caller: Caller, f: ObjectFilter): Promise<SQL[]> {
  const where: SQL[] = [eq(mediaObjects.orgId, caller.orgId), isNull(mediaObjects.deletedAt)];
  const bucketId = f.bucketId ? (await resolveBucket(deps, caller, f.bucketId)).id : caller.bucketId;
  if (bucketId) where.push(eq(mediaObjects.bucketId, bucketId));
  if (f.kind) where.push(eq(mediaObjects.kind, f.kind));
  if (f.search) where.push(ilike(mediaObjects.key, keyPattern(f.search)));
  if (f.prefix) where.push(sql`${mediaObjects.key} like ${`${escapeLike(f.prefix)}%`}`);
  for (const slug of f.tagSlugs) {
    where.push(sql`exists (select 1 from object_tags ot join tags t on t.id = ot.tag_id
      where ot.object_id = ${mediaObjects.id} and t.org_id = ${caller.orgId} and t.slug = ${slug})`);
  }
  for (const slug of f.categorySlugs) {
    where.push(sql`exists (with recursive sub as (
        select id from categories where org_id = ${caller.orgId} and slug = ${slug}
        union all select c.id from categories c join sub on c.parent_id = sub.id where c.org_id = ${caller.orgId})
      select 1 from object_categories oc where oc.object_id = ${mediaObjects.id} and oc.category_id in (select id from sub))`);
  }
  return where;
}
