import { z } from "zod";
import { id, listOf, timestamp } from "./common.ts";

export const clip = z
  .object({
    id: id("Clip"),
    storyboardId: id("Storyboard"),
    objectId: id("Media object"),
    position: z.number().int().describe("0-based; a storyboard's clips are always at 0..n-1"),
    note: z.string(),
    objectDeleted: z.boolean().describe("True when the media object was deleted; the clip keeps its place until removed"),
    createdAt: timestamp("Creation time"),
  })
  .meta({ id: "Clip" });
export type Clip = z.output<typeof clip>;

const storyboardSummaryFields = {
  id: id("Storyboard"),
  name: z.string(),
  bucketId: id("Bucket").nullable().describe("When set, every clip comes from this bucket and keys restricted to it can use the storyboard"),
  clipCount: z.number().int(),
  createdAt: timestamp("Creation time"),
  updatedAt: timestamp("Last change"),
};

export const storyboardSummary = z.object(storyboardSummaryFields).meta({ id: "StoryboardSummary" });
export type StoryboardSummary = z.output<typeof storyboardSummary>;

export const storyboardSummaryList = listOf(storyboardSummary);

export const storyboard = z
  .object({ ...storyboardSummaryFields, clips: z.array(clip).describe("Ordered by position") })
  .meta({ id: "Storyboard" });
export type Storyboard = z.output<typeof storyboard>;
