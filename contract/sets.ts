import { z } from "zod";
import { id, listOf, timestamp } from "./common.ts";

/** attached: the object was given when adding the item; generated: `sets_generate` renders it. */
export const SET_ITEM_SOURCES = ["attached", "generated"] as const;
export type SetItemSource = (typeof SET_ITEM_SOURCES)[number];

export const setItem = z
  .object({
    id: id("Set item"),
    setId: id("Set"),
    objectId: id("Media object").nullable().describe("The rendition; null while a generated item has not been rendered yet"),
    objectDeleted: z.boolean().describe("True when objectId points at a deleted media object"),
    source: z
      .enum(SET_ITEM_SOURCES)
      .describe("attached: the object was given when adding the item, generate leaves it alone; generated: generate renders it from the base object"),
    aspectRatio: z.string().describe("W:H"),
    width: z.number().int(),
    height: z.number().int(),
    role: z.string(),
    renderError: z.string().nullable().describe("Why the last generation of this item failed; null when it was made, is still pending, or the item is attached"),
    createdAt: timestamp("Creation time"),
  })
  .meta({ id: "SetItem" });
export type SetItem = z.output<typeof setItem>;

const setSummaryFields = {
  id: id("Set"),
  name: z.string(),
  bucketId: id("Bucket").describe("The base object's bucket; the set lives there"),
  baseObjectId: id("Media object"),
  baseObjectDeleted: z.boolean().describe("True when the base object was deleted; generate then answers 409"),
  itemCount: z.number().int(),
  generateRequestedAt: timestamp("Last generate request").nullable(),
  createdAt: timestamp("Creation time"),
  updatedAt: timestamp("Last change"),
};

export const setSummary = z.object(setSummaryFields).meta({ id: "SetSummary" });
export type SetSummary = z.output<typeof setSummary>;

export const setSummaryList = listOf(setSummary);

/** Named MediaSet, not Set, so that generated clients do not shadow their language's Set. */
export const mediaSet = z.object({ ...setSummaryFields, items: z.array(setItem).describe("In the order they were added") }).meta({ id: "MediaSet" });
export type MediaSet = z.output<typeof mediaSet>;

/** How a generated item's rendition ended, as a call with `wait` reports it. */
export const SET_RENDITION_STATES = ["made", "failed", "pending"] as const;

export const setRendition = z
  .object({
    itemId: id("Set item"),
    role: z.string(),
    width: z.number().int(),
    height: z.number().int(),
    state: z.enum(SET_RENDITION_STATES).describe("made: objectId is the new rendition; failed: error says why; pending: not settled when the wait ended"),
    objectId: id("Media object").nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: "SetRendition" });
export type SetRendition = z.output<typeof setRendition>;

/** queued: answered at once; settled: every item made or failed (wait); timed_out: the wait ended first. */
export const SET_GENERATION_STATUSES = ["queued", "settled", "timed_out"] as const;

export const setGeneration = z
  .object({
    setId: id("Set"),
    jobId: id("Job"),
    status: z.enum(SET_GENERATION_STATUSES).describe("queued without wait; with wait, settled or timed_out (then poll sets_get)"),
    items: z.number().int().describe("Generated items the job will render"),
    renditions: z.array(setRendition).optional().describe("With wait: each generated item's outcome"),
  })
  .meta({ id: "SetGeneration" });
export type SetGeneration = z.output<typeof setGeneration>;
