import { z } from "zod";
import { deleted, id, pageInput } from "../contract/common.ts";
import { clip, storyboard, storyboardSummaryList } from "../contract/storyboards.ts";
import {
  addClip,
  createStoryboard,
  deleteStoryboard,
  getStoryboard,
  listStoryboards,
  MAX_CLIPS,
  MAX_NOTE,
  removeClip,
  reorderClips,
  updateClip,
} from "../domain/collections/storyboards.ts";
import { defineTool } from "./define.ts";

const note = z.string().max(MAX_NOTE).describe(`Free text, at most ${MAX_NOTE} characters`);

export const storyboardTools = [
  defineTool({
    name: "storyboards_list",
    title: "List storyboards",
    description: "Storyboards of the organization, newest first, with their clip counts; storyboards_get shows the clips. A bucket-restricted key sees the storyboards bound to its bucket.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/storyboards" },
    input: z.object({ ...pageInput }),
    output: storyboardSummaryList,
    handler: (input, { deps, caller }) => listStoryboards(deps, caller, input),
  }),
  defineTool({
    name: "storyboards_create",
    title: "Create a storyboard",
    description:
      "Creates an empty storyboard (an ordered list of clips of media objects). bucketId binds it to one bucket (clips must then come from there); " +
      "a bucket-restricted key always creates storyboards bound to its bucket.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/storyboards", status: 201 },
    input: z.object({
      name: z.string().trim().min(1).max(200),
      bucketId: id("Bucket").optional().describe("Bind the storyboard to this bucket"),
    }),
    output: storyboard,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => createStoryboard(deps, caller, input),
  }),
  defineTool({
    name: "storyboards_get",
    title: "Get a storyboard",
    description: "One storyboard with its clips in order (positions 0..n-1).",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/storyboards/{id}" },
    input: z.object({ id: id("Storyboard") }),
    output: storyboard,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => getStoryboard(deps, caller, input.id),
  }),
  defineTool({
    name: "storyboards_delete",
    title: "Delete a storyboard",
    description: "Deletes a storyboard and its clips. The media objects are kept.",
    scope: "delete",
    reach: "bucket",
    http: { method: "DELETE", path: "/storyboards/{id}" },
    input: z.object({ id: id("Storyboard") }),
    output: deleted,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => deleteStoryboard(deps, caller, input.id),
  }),
  defineTool({
    name: "storyboards_add_clip",
    title: "Add a clip to a storyboard",
    description:
      "Inserts a clip of a live media object at position (0-based, 0..n; omit to append); clips at and after it move down one. " +
      `A position past the end is 400. The same object may appear in several clips. At most ${MAX_CLIPS} clips.`,
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/storyboards/{id}/clips", status: 201 },
    input: z.object({
      id: id("Storyboard"),
      objectId: id("Media object"),
      position: z.number().int().min(0).optional().describe("0-based insert position, 0..n; omitted: append"),
      note: note.optional(),
    }),
    output: clip,
    errors: ["not_found", "conflict"],
    handler: (input, { deps, caller }) => addClip(deps, caller, input.id, input),
  }),
  defineTool({
    name: "storyboards_reorder_clips",
    title: "Reorder a storyboard's clips",
    description:
      "Sets the order of all clips at once: clipIds must contain every clip id of the storyboard exactly once, in the new order. " +
      "A foreign, missing or repeated id is 400 validation_error (details say which) and nothing changes. Returns the reordered storyboard.",
    scope: "write",
    reach: "bucket",
    http: { method: "PUT", path: "/storyboards/{id}/clips/reorder" },
    input: z.object({
      id: id("Storyboard"),
      clipIds: z.array(id("Clip")).max(MAX_CLIPS).describe("Every clip id of the storyboard, in the new order"),
    }),
    output: storyboard,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => reorderClips(deps, caller, input.id, input.clipIds),
  }),
  defineTool({
    name: "storyboards_update_clip",
    title: "Move a clip or change its note",
    description:
      "Moves a clip to position (0-based, 0..n-1; the clips in between shift by one) and/or replaces its note. Give at least one of the two.",
    scope: "write",
    reach: "bucket",
    http: { method: "PUT", path: "/storyboards/{id}/clips/{clipId}" },
    input: z.object({
      id: id("Storyboard"),
      clipId: id("Clip"),
      position: z.number().int().min(0).optional().describe("New 0-based position, 0..n-1"),
      note: note.optional(),
    }),
    output: clip,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => updateClip(deps, caller, input.id, input.clipId, input),
  }),
  defineTool({
    name: "storyboards_remove_clip",
    title: "Remove a clip from a storyboard",
    description: "Removes a clip; the clips after it move up one, so positions stay 0..n-1. The media object is kept.",
    scope: "delete",
    reach: "bucket",
    http: { method: "DELETE", path: "/storyboards/{id}/clips/{clipId}" },
    input: z.object({ id: id("Storyboard"), clipId: id("Clip") }),
    output: deleted,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => removeClip(deps, caller, input.id, input.clipId),
  }),
];
