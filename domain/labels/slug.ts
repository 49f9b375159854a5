import { errors } from "../core/errors.ts";

/** Longest slug derived from a name; room is left for a "-N" suffix. */
export const MAX_SLUG_BASE = 100;

/**
 * URL- and filter-safe form of a name: accents dropped, lower case, every run of anything
 * but letters and digits (any script) turned into one "-". Never contains a comma, so slugs
 * can be listed comma-separated in search filters. Empty when the name has no letter or digit.
 */
export function slugify(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, MAX_SLUG_BASE)
    .replace(/-+$/, "");
}

/** `%`, `_` and `\` taken literally in a LIKE pattern. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The slug of a name, or a validation error on `path` when it has no letter or digit. */
export function slugOrThrow(name: string, path: string): string {
  const slug = slugify(name);
  if (!slug) throw errors.validation([{ path, message: "The name needs at least one letter or digit" }]);
  return slug;
}

/** Comma-separated slugs (the tag and category filters of search and media_list), trimmed, lowercased, deduplicated. */
export const slugList = (s: string | undefined) => [...new Set((s ?? "").split(",").map((x) => x.trim().toLowerCase()).filter(Boolean))];
