import { z } from "zod";
import { bytes, id, listOf } from "./common.ts";
import { mediaObject } from "./media.ts";

/** Hamming distances the similarity tools accept: 0 (the same picture) to 10 of 64 bits. */
export const MAX_PICTURE_DISTANCE = 10;

export const pictureDistance = (fallback: number) =>
  z.number().int().min(0).max(MAX_PICTURE_DISTANCE).default(fallback).describe("Most differing bits of 64");

export const similarObject = z
  .object({ distance: z.number().int().describe("Differing bits of the 64-bit picture hash"), object: mediaObject })
  .meta({ id: "SimilarObject" });
export type SimilarObject = z.output<typeof similarObject>;
export const similarList = listOf(similarObject);

const groupMember = z.object({ id: id("Media object"), key: z.string(), size: bytes("Size") });

export const duplicateGroup = z
  .object({
    objects: z.array(groupMember).describe("Largest first"),
    bytes: bytes("Their total size"),
    reclaimable: bytes("Freed by keeping only the first"),
  })
  .meta({ id: "DuplicateGroup" });
export type DuplicateGroup = z.output<typeof duplicateGroup>;
export const duplicateGroupList = listOf(duplicateGroup);
