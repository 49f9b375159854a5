import { and, eq, inArray, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import type { categories, tags } from "../../db/schema/index.ts";
import { slugify } from "./slug.ts";

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface NamedLabel {
  id: string;
  slug: string;
  name: string;
}

/**
 * The one rule for naming a tag or category wherever one is named (the media_list and search
 * filters, media://tags/..., objects_set_tags' add and remove): its id, its slug, or its name
 * in any case ("Golden Hour", "golden-hour" and the tag's id name the same tag). An entry is
 * tried as an id first, then as a slug, then through its slug form, then as a name as written;
 * of two categories with one name, the one whose slug is that form wins. Answers the label each
 * entry names (entries that name nothing are absent), in one query.
 */
export async function findLabels(db: Db, table: typeof tags | typeof categories, orgId: string, refs: readonly string[]): Promise<Map<string, NamedLabel>> {
  const found = new Map<string, NamedLabel>();
  if (refs.length === 0) return found;
  const ids = refs.filter((r) => UUID.test(r)).map((r) => r.toLowerCase());
  const slugs = [...new Set(refs.flatMap((r) => [r.toLowerCase(), slugify(r)]).filter(Boolean))];
  const names = [...new Set(refs.map((r) => r.toLowerCase()))];
  const rows = await db
    .select({ id: table.id, slug: table.slug, name: table.name })
    .from(table)
    .where(and(eq(table.orgId, orgId), or(...(ids.length ? [inArray(table.id, ids)] : []), inArray(table.slug, slugs), inArray(sql`lower(${table.name})`, names))))
    .orderBy(table.slug);
  for (const ref of refs) {
    const lower = ref.toLowerCase();
    const hit =
      rows.find((r) => r.id === lower) ?? rows.find((r) => r.slug === lower) ?? rows.find((r) => r.slug === slugify(ref)) ?? rows.find((r) => r.name.toLowerCase() === lower);
    if (hit) found.set(ref, hit);
  }
  return found;
}

/**
 * A filter's comma-separated list as the slugs of the labels it names, in order (findLabels'
 * rule). An entry that names nothing is kept as given, lower-cased, so it matches nothing, as an
 * unknown slug always has.
 */
export async function labelSlugs(db: Db, table: typeof tags | typeof categories, orgId: string, list: string | undefined): Promise<string[]> {
  const refs = [...new Set((list ?? "").split(",").map((x) => x.trim()).filter(Boolean))];
  const found = await findLabels(db, table, orgId, refs);
  return [...new Set(refs.map((ref) => found.get(ref)?.slug ?? ref.toLowerCase()))];
}
