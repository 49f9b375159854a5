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

export const setGeneration = z
  .object({
    setId: id("Set"),
    jobId: id("Job"),
    status: z.literal("queued"),
    items: z.number().int().describe("Generated items the job will render"),
  })
  .meta({ id: "SetGeneration" });
export type SetGeneration = z.output<typeof setGeneration>;
