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
  media: { description: "Objects: list, get, update metadata, delete, thumbnails, renders, stream URLs", prefixes: ["media_list", "media_get", "media_update", "media_delete", "media_stream", "media_thumbnail", "media_render"] },
  multipart: { description: "Multipart uploads of large files (over 16 MiB)", prefixes: ["presign_create_multipart", "presign_upload_part", "presign_complete_upload", "presign_abort_multipart"] },
  upload: { description: "Putting files in and getting them out: presigned upload and download URLs, import by URL, job state", prefixes: ["presign_upload", "presign_confirm", "presign_download", "media_import", "jobs_"] },
  search: { description: "Full-text and faceted search", prefixes: ["search"] },
  labels: { description: "Tags and categories, and assigning them", prefixes: ["tags_", "categories_", "objects_set_"] },
  collections: { description: "Sets and storyboards", prefixes: ["sets_", "storyboards_"] },
  trash: { description: "Deleted objects: list, restore, purge", prefixes: ["trash_"] },
  usage: { description: "Storage and traffic usage", prefixes: ["usage_"] },
  billing: { description: "Plan, capacity, invoices", prefixes: ["billing_"] },
  keys: { description: "API keys and service credentials", prefixes: ["api_keys_", "service_credentials_"] },
  webhooks: { description: "Webhook endpoints and deliveries", prefixes: ["webhooks_"] },
  admin: { description: "Audit log, media settings, storage reconciliation", prefixes: ["audit_", "media_settings_", "reconcile_"] },
} as const satisfies Record<string, { description: string; prefixes: readonly string[] }>;

export type Toolset = keyof typeof TOOLSETS;
export const TOOLSET_NAMES = Object.keys(TOOLSETS) as Toolset[];

/** What a client gets when it names no toolset: the work on media; administration is asked for. */
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

export const DEFAULT_SELECTION: ToolSelection = { toolsets: DEFAULT_TOOLSETS, readOnly: false };
export const ALL_TOOLS: ToolSelection = { toolsets: ["all"], readOnly: false };

/** Reads `toolsets=media,search` (or `all`, or `default`) and `readonly=true`; unknown names are an error the caller sees. */
export function parseSelection(toolsets: string | null, readOnly: string | null): ToolSelection | { unknown: string[] } {
  const names = (toolsets ?? "default").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
  const expanded = names.flatMap((n): string[] => (n === "default" ? [...DEFAULT_TOOLSETS] : [n]));
  const unknown = expanded.filter((n) => n !== "all" && !(n in TOOLSETS));
  if (unknown.length > 0) return { unknown };
  return { toolsets: expanded as (Toolset | "all")[], readOnly: readOnly === "true" || readOnly === "1" };
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
