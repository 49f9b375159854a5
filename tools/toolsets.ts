import type { AnyTool } from "./define.ts";

/**
 * Toolsets: named groups of tools a client can ask for instead of all of them (as GitHub's MCP
 * server does), so an agent pays in context only for what its task needs. A tool belongs to
 * the first set (in this order) with a prefix its name starts with; every tool belongs to exactly one
 * (test/unit/mcp-tool-list.test.ts). Access rules are unchanged: a set only narrows what the
 * caller's credential may use.
 */
export const TOOLSETS = {
  context: { description: "Who the credential is: me_get", prefixes: ["me_"] },
  buckets: { description: "Create, list, delete buckets", prefixes: ["buckets_"] },
  media: { description: "Objects: list, get, update metadata, move, delete, bulk changes, thumbnails, renders, stream URLs", prefixes: ["media_list", "media_get", "media_update", "media_delete", "media_stream", "media_thumbnail", "media_render", "objects_move", "objects_bulk_"] },
  multipart: { description: "Multipart uploads of large files (over 16 MiB)", prefixes: ["presign_create_multipart", "presign_upload_part", "presign_complete_upload", "presign_abort_multipart"] },
  upload: { description: "Putting files in and getting them out: presigned upload and download URLs, import by URL, job state", prefixes: ["presign_upload", "presign_confirm", "presign_download", "media_import", "jobs_"] },
  search: { description: "Full-text and faceted search, the text inside files, similar pictures, duplicates", prefixes: ["search", "media_text_extract", "media_similar", "media_duplicates"] },
  labels: { description: "Tags and categories, and assigning them", prefixes: ["tags_", "categories_", "objects_set_"] },
  collections: { description: "Sets and storyboards", prefixes: ["sets_", "storyboards_"] },
  trash: { description: "Deleted objects: list, restore, purge", prefixes: ["trash_"] },
  usage: { description: "Storage and traffic usage", prefixes: ["usage_"] },
  billing: { description: "Plan, capacity, invoices", prefixes: ["billing_"] },
  keys: { description: "API keys, service credentials, OAuth grants", prefixes: ["api_keys_", "service_credentials_", "oauth_"] },
  webhooks: { description: "Webhook endpoints and deliveries", prefixes: ["webhooks_"] },
  admin: { description: "Audit log, media settings, storage reconciliation", prefixes: ["audit_", "media_settings_", "reconcile_"] },
} as const satisfies Record<string, { description: string; prefixes: readonly string[] }>;

export type Toolset = keyof typeof TOOLSETS;
export const TOOLSET_NAMES = Object.keys(TOOLSETS) as Toolset[];

/**
 * A narrower choice a client may name (`toolsets=default`): the work on media, without
 * administration. Naming no toolset lists every tool the credential may use.
 */
export const DEFAULT_TOOLSETS: readonly Toolset[] = ["context", "buckets", "media", "upload", "search", "labels"];

export function toolsetOf(tool: Pick<AnyTool, "name">): Toolset | null {
  for (const name of TOOLSET_NAMES) {
    if (TOOLSETS[name].prefixes.some((p) => tool.name.startsWith(p))) return name;
  }
  return null;
}

export interface ToolSelection {
  /** The sets asked for; "all" in the list means every set. */
  toolsets: readonly (Toolset | "all")[];
  /** Only tools that change nothing (readOnlyHint). */
  readOnly: boolean;
}

/** What a client gets when it names nothing: every tool its credential may use, as REST offers them. */
export const ALL_TOOLS: ToolSelection = { toolsets: ["all"], readOnly: false };
export const DEFAULT_SELECTION: ToolSelection = { toolsets: DEFAULT_TOOLSETS, readOnly: false };

const FALSE = new Set(["false", "0", "no", "off"]);

/**
 * Reads the `toolsets` and `readonly` values of a request (every occurrence of each, from the
 * query and the X-MCP-Toolsets / X-MCP-Readonly headers alike; none: the choice is absent).
 * Both only narrow, and neither fails open:
 * - `toolsets`: comma-separated set names, `default` or `all`, case-insensitive; repeated
 *   values add up (`toolsets=media&toolsets=search` is `media,search`). Present but naming
 *   nothing (`toolsets=`) or naming an unknown set is refused: a client that meant to narrow
 *   would otherwise get everything, or less than it thinks.
 * - `readonly`: only an explicit false (false, 0, no, off, any case) leaves the write tools in;
 *   any other value, an empty one or a typo included, means read-only (as GitHub's MCP server
 *   reads it). Repeated, one read-only value wins.
 */
export function parseSelection(toolsets: readonly string[], readOnly: readonly string[]): ToolSelection | { parameter: "toolsets"; error: string } {
  const readOnlyAsked = readOnly.some((raw) => !FALSE.has(raw.trim().toLowerCase()));
  if (toolsets.length === 0) return { toolsets: ALL_TOOLS.toolsets, readOnly: readOnlyAsked };
  const names = toolsets.flatMap((v) => v.split(",")).map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (names.length === 0) return { parameter: "toolsets", error: `toolsets names no toolset: leave it out for every tool, or name some of ${TOOLSET_NAMES.join(", ")}, default, all` };
  const expanded = [...new Set(names.flatMap((n): string[] => (n === "default" ? [...DEFAULT_TOOLSETS] : [n])))];
  const unknown = expanded.filter((n) => n !== "all" && !(n in TOOLSETS));
  if (unknown.length > 0) return { parameter: "toolsets", error: `Unknown toolset ${unknown.join(", ")}: the toolsets are ${TOOLSET_NAMES.join(", ")}, default and all` };
  return { toolsets: expanded as (Toolset | "all")[], readOnly: readOnlyAsked };
}

export function selectTools(tools: readonly AnyTool[], selection: ToolSelection): AnyTool[] {
  const all = selection.toolsets.includes("all");
  return tools.filter((t) => {
    if (selection.readOnly && !t.annotations.readOnlyHint) return false;
    if (all) return true;
    const set = toolsetOf(t);
    return set !== null && selection.toolsets.includes(set);
  });
}
