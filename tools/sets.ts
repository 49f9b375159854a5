import { z } from "zod";
import { deleted, id, pageInput } from "../contract/common.ts";
import { mediaSet, setGeneration, setItem, setSummaryList } from "../contract/sets.ts";
import {
  ASPECT_RATIO,
  addSetItem,
  awaitGeneration,
  createSet,
  deleteSet,
  generateSet,
  getSet,
  listSets,
  MAX_GENERATION_WAIT_MS,
  MAX_RENDITION_SIDE,
  MAX_SET_ITEMS,
  removeSetItem,
} from "../domain/collections/sets.ts";
import { defineTool } from "./define.ts";

const side = (what: string) => z.number().int().min(1).max(MAX_RENDITION_SIDE).describe(what);

export const setTools = [
  defineTool({
    name: "sets_list",
    title: "List sets",
    description: "Sets (renditions of a base object), newest first, without items.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/sets" },
    input: z.object({ ...pageInput }),
    output: setSummaryList,
    handler: (input, { deps, caller }) => listSets(deps, caller, input),
  }),
  defineTool({
    name: "sets_create",
    title: "Create a set",
    description:
      "Creates an empty set of renditions of baseObjectId; then sets_add_item, sets_generate.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/sets", status: 201 },
    input: z.object({
      name: z.string().trim().min(1).max(200).describe("Set name"),
      baseObjectId: id("Media object").describe("The original the renditions are made from"),
    }),
    output: mediaSet,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => createSet(deps, caller, input),
  }),
  defineTool({
    name: "sets_get",
    title: "Get a set",
    description: "One set with its items (objectId null: not generated yet; objectDeleted: rendition deleted).",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/sets/{id}" },
    input: z.object({ id: id("Set") }),
    output: mediaSet,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => getSet(deps, caller, input.id),
  }),
  defineTool({
    name: "sets_delete",
    title: "Delete a set",
    description: "Deletes a set and its items; the media objects are kept.",
    scope: "delete",
    reach: "bucket",
    http: { method: "DELETE", path: "/sets/{id}" },
    input: z.object({ id: id("Set") }),
    output: deleted,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => deleteSet(deps, caller, input.id),
  }),
  defineTool({
    name: "sets_add_item",
    title: "Add an item to a set",
    description: "Adds a rendition slot for sets_generate, or attaches objectId (of the set's bucket). At most 100.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/sets/{id}/items", status: 201 },
    input: z.object({
      id: id("Set"),
      objectId: id("Media object").optional().describe("Attach this object instead of generating"),
      aspectRatio: z.string().regex(ASPECT_RATIO, "Expected W:H with positive integers, e.g. 16:9").describe("W:H, e.g. 16:9"),
      width: side("Pixels; width:height must match aspectRatio within 2%"),
      height: side("Pixels"),
      role: z.string().trim().min(1).max(64).describe("Purpose, e.g. thumbnail, hero"),
    }),
    output: setItem,
    errors: ["not_found", "conflict"],
    handler: (input, { deps, caller }) => addSetItem(deps, caller, input.id, input),
  }),
  defineTool({
    name: "sets_remove_item",
    title: "Remove an item from a set",
    description: "Removes one item from a set; its object is kept.",
    scope: "delete",
    reach: "bucket",
    http: { method: "DELETE", path: "/sets/{id}/items/{itemId}" },
    input: z.object({ id: id("Set"), itemId: id("Set item") }),
    output: deleted,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => removeSetItem(deps, caller, input.id, input.itemId),
  }),
  defineTool({
    name: "sets_generate",
    title: "Generate a set's renditions",
    description: "Renders the set's generated items from the base, replacing earlier renditions. Answers queued: poll sets_get, or pass wait: true.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/sets/{id}/generate", status: 202 },
    // Each item's rendition is replaced by the new one.
    annotations: { destructiveHint: true },
    input: z.object({
      id: id("Set"),
      wait: z.boolean().optional().describe(`Answer once all are made or failed (${MAX_GENERATION_WAIT_MS / 60_000} min at most, else timed_out)`),
    }),
    output: setGeneration,
    errors: ["not_found", "conflict"],
    handler: async (input, { deps, caller, progress, holdOpen }) => {
      const queued = await generateSet(deps, caller, input.id);
      if (!input.wait) {
        const { itemIds: _, ...generation } = queued;
        return generation;
      }
      holdOpen?.(Math.ceil(MAX_GENERATION_WAIT_MS / 1000) + 10);
      return awaitGeneration(deps, queued, { orgId: caller.orgId, deadline: Date.now() + MAX_GENERATION_WAIT_MS, ...(progress ? { onProgress: progress } : {}) });
    },
    // The counts by outcome are the answer; the generic line would give the status alone.
    mcpSummary: (g) => {
      if (!g.renditions) return `Generation of set ${g.setId} queued: ${g.items} items (job ${g.jobId}); poll sets_get`;
      const count = (state: string) => g.renditions!.filter((r) => r.state === state).length;
      // One failure often fails every item alike (an undecodable base): each reason once, with its items.
      const reasons = new Map<string, string[]>();
      for (const r of g.renditions) if (r.state === "failed") reasons.set(r.error ?? "", [...(reasons.get(r.error ?? "") ?? []), r.role || r.itemId]);
      return (
        `Generation of set ${g.setId} ${g.status}: ${count("made")} made, ${count("failed")} failed, ${count("pending")} pending of ${g.items}` +
        [...reasons].map(([why, roles]) => `; ${roles.join(", ")}: ${why}`).join("") +
        (g.status === "timed_out" ? "; poll sets_get" : "")
      );
    },
  }),
];
