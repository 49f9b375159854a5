import { z } from "zod";
import { createBucket, deleteBucket, getBucket, listBuckets } from "../domain/buckets/buckets.ts";
import { bucket, bucketList } from "../contract/buckets.ts";
import { deleted, id, pageInput } from "../contract/common.ts";
import { defineTool } from "./define.ts";

export const bucketTools = [
  defineTool({
    name: "buckets_list",
    title: "List buckets",
    description: "Buckets of the organization, newest first.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/buckets" },
    input: z.object({ ...pageInput }),
    output: bucketList,
    handler: (input, { deps, caller }) => listBuckets(deps, caller, input),
  }),
  defineTool({
    name: "buckets_create",
    title: "Create a bucket",
    description: "Creates a bucket to hold media objects.",
    scope: "write",
    reach: "organization",
    http: { method: "POST", path: "/buckets", status: 201 },
    input: z.object({
      name: z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, "1-63 characters: letters, digits, '.', '_' or '-', starting with a letter or digit")
        .describe("Bucket name, unique in the organization"),
    }),
    output: bucket,
    errors: ["conflict"],
    handler: (input, { deps, caller }) => createBucket(deps, caller, input),
  }),
  defineTool({
    name: "buckets_get",
    title: "Get a bucket",
    description: "One bucket of the organization, by id.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/buckets/{id}" },
    input: z.object({ id: id("Bucket") }),
    output: bucket,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => getBucket(deps, caller, input.id),
  }),
  defineTool({
    name: "buckets_delete",
    title: "Delete a bucket",
    description: "Deletes an empty bucket (conflict while it holds objects).",
    scope: "delete",
    reach: "organization",
    http: { method: "DELETE", path: "/buckets/{id}" },
    input: z.object({ id: id("Bucket") }),
    output: deleted,
    errors: ["not_found", "conflict"],
    handler: (input, { deps, caller }) => deleteBucket(deps, caller, input.id),
  }),
];
