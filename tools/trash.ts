import { z } from "zod";
import { id, pageInput } from "../contract/common.ts";
import { mediaObject } from "../contract/media.ts";
import { purged, trashedObjectList } from "../contract/trash.ts";
import { listTrash, purgeTrashed, restoreObject } from "../domain/media/trash.ts";
import { defineTool } from "./define.ts";

/**
 * The trash (docs/events.md): deleted objects stay restorable for the retention period. Like
 * media, a key restricted to one bucket sees and acts on its bucket's trash only.
 */
export const trashTools = [
  defineTool({
    name: "trash_list",
    title: "List deleted objects",
    description: "Objects deleted in the last 7 days, newest first, and if each can be restored.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/trash" },
    input: z.object({ bucketId: id("Bucket").optional(), ...pageInput }),
    output: trashedObjectList,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => listTrash(deps, caller, input),
  }),
  defineTool({
    name: "trash_restore",
    title: "Restore a deleted object",
    description: "Brings a deleted object back with its labels, thumbnail and sets. conflict if a later upload took its key.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/trash/{id}/restore" },
    input: z.object({ id: id("Media object") }),
    output: mediaObject,
    errors: ["not_found", "conflict", "quota_exceeded"],
    handler: (input, { deps, caller }) => restoreObject(deps, caller, input.id),
  }),
  defineTool({
    name: "trash_purge",
    title: "Purge a deleted object now",
    description: "Deletes a trashed object for good: bytes, derivatives and record.",
    scope: "delete",
    reach: "bucket",
    http: { method: "DELETE", path: "/trash/{id}" },
    input: z.object({ id: id("Media object") }),
    output: purged,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => purgeTrashed(deps, caller, input.id),
  }),
];
