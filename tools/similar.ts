import { z } from "zod";
import { id, pageInput } from "../contract/common.ts";
import { duplicateGroupList, pictureDistance, similarList } from "../contract/similar.ts";
import { findDuplicates, findSimilar } from "../domain/media/similar.ts";
import { defineTool } from "./define.ts";

export const similarTools = [
  defineTool({
    name: "media_similar",
    title: "Find similar pictures",
    description: "Objects whose picture (image, video poster, PDF page 1) looks like this object's, nearest first.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/media/{id}/similar" },
    input: z.object({ id: id("Media object"), bucketId: id("Bucket").optional(), maxDistance: pictureDistance(7), ...pageInput }),
    output: similarList,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => findSimilar(deps, caller, input),
  }),
  defineTool({
    name: "media_duplicates",
    title: "Near-duplicates in a bucket",
    description: "Groups of near-identical pictures in a bucket, those freeing the most bytes first.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/buckets/{id}/duplicates" },
    input: z.object({ id: id("Bucket"), maxDistance: pictureDistance(4), ...pageInput }),
    output: duplicateGroupList,
    errors: ["not_found"],
    handler: ({ id, ...rest }, { deps, caller }) => findDuplicates(deps, caller, { bucketId: id, ...rest }),
  }),
];
