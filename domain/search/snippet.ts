/**
 * Snippets travel as text with the matched words between two control characters (which the
 * stored text never holds: extraction drops them), so the text itself can be HTML-escaped
 * before the markers become <mark> tags: a file saying "<script>" shows it, never runs it.
 */
export const MARK_START = "\u0002";
export const MARK_STOP = "\u0003";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function markedSnippet(raw: string): string {
  return raw
    .replace(/[&<>"']/g, (c) => ESCAPES[c]!)
    .replaceAll(MARK_START, "<mark>")
    .replaceAll(MARK_STOP, "</mark>")
    .replace(/\s+/g, " ")
    .trim();
}
