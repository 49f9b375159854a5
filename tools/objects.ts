import { z } from "zod";
import { id } from "../contract/common.ts";
import { BULK_MAX, bulkResult, MEDIA_KINDS, mediaObject } from "../contract/media.ts";
import { bulkDelete, bulkUpdate } from "../domain/media/bulk.ts";
import { moveObject } from "../domain/media/move.ts";
import { defineTool, type ToolContext } from "./define.ts";
import { objectKey } from "./inputs.ts";

/** Moving objects, and changing or deleting many at once (docs/organizing.md#moving-and-bulk-changes). */

const labelRefs = (what: string) => z.array(z.string().trim().min(1).max(128)).max(100).optional().describe(what);

/** Which objects a bulk call reaches: ids, or media_list's filters (every object of the filter, `limit` a call). */
const selection = {
  ids: z.array(id("Media object")).min(1).max(BULK_MAX).optional().describe(`Up to ${BULK_MAX} objects; or use filter`),
  filter: z
    .object({
      bucketId: id("Bucket").optional(),
      kind: z.enum(MEDIA_KINDS).optional().describe("Only this kind"),
      search: z.string().min(1).max(200).optional().describe("Part of the key, any case"),
      prefix: z.string().min(1).max(1024).optional().describe("Keys starting with this"),
      tags: z.string().max(2000).optional().describe("Comma-separated tags, all required"),
      categories: z.string().max(2000).optional().describe("Comma-separated categories, all required"),
    })
    .strict()
    .optional()
    .describe("All objects matching, as media_list filters; {} is every object"),
  cursor: z.string().max(64).optional().describe("From the last answer, to continue the filter"),
  limit: z.number().int().min(1).max(BULK_MAX).default(100).describe("Objects of the filter this call reaches"),
};

/**
 * A bulk call may run long (a thousand moves copy a thousand objects): each object re-arms the
 * connection's idle timeout and, over MCP, reports how far the call got.
 */
function onObject(ctx: ToolContext) {
  return (done: number, total: number) => {
    ctx.holdOpen?.(60);
    ctx.progress?.(done, total, `${done} of ${total} objects`);
  };
}

export const objectTools = [
  defineTool({
    name: "objects_move",
    title: "Move or rename a media object",
    description: "Gives the object a new key, in its bucket or another; id, labels and thumbnails stay. A taken key is conflict unless overwrite.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/media/{id}/move" },
    input: z.object({
      id: id("Media object"),
      key: objectKey.describe("The new key"),
      bucketId: id("Bucket").optional().describe("Target bucket; default: the same"),
      overwrite: z.boolean().default(false).describe("Replace an object at the key (it goes to the trash; needs delete)"),
    }),
    output: mediaObject,
    errors: ["not_found", "conflict"],
    // A repeat finds the object at its new key and changes nothing; an overwrite deletes.
    annotations: { destructiveHint: true, idempotentHint: true },
    handler: (input, { deps, caller }) => moveObject(deps, caller, input.id, input),
  }),
  defineTool({
    name: "objects_bulk_update",
    title: "Change many media objects",
    description: "Adds or removes tags, sets or adds categories, or moves into a prefix or bucket, for ids or a filter; answers per object.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/media/bulk-update" },
    input: z.object({
      ...selection,
      addTags: labelRefs("Tags to add: id, slug or name (new names create tags)"),
      removeTags: labelRefs("Tags to remove"),
      setCategories: labelRefs("The objects' categories after the call"),
      addCategories: labelRefs("Categories to add"),
      moveTo: z
        .object({ prefix: z.string().max(900).optional().describe('Key prefix, e.g. "archive/"; the file name is kept'), bucketId: id("Bucket").optional() })
        .strict()
        .optional()
        .describe("Move each object (a taken key is refused for that object)"),
    }),
    output: bulkResult,
    errors: ["not_found"],
    annotations: { destructiveHint: true },
    handler: ({ ids, filter, cursor, limit, ...changes }, ctx) => bulkUpdate(ctx.deps, ctx.caller, { ids, filter, cursor, limit, onObject: onObject(ctx) }, changes),
  }),
  defineTool({
    name: "objects_bulk_delete",
    title: "Delete many media objects",
    description: "Moves the objects named by ids or a filter to the trash, as media_delete does; answers per object.",
    scope: "delete",
    reach: "bucket",
    http: { method: "POST", path: "/media/bulk-delete" },
    input: z.object(selection),
    output: bulkResult,
    errors: ["not_found"],
    annotations: { destructiveHint: true },
    handler: ({ ids, filter, cursor, limit }, ctx) => bulkDelete(ctx.deps, ctx.caller, { ids, filter, cursor, limit, onObject: onObject(ctx) }),
  }),
];
