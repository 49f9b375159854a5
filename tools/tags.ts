import { z } from "zod";
import { pageInput } from "../contract/common.ts";
import { objectTags, tag, tagDeleted, tagList } from "../contract/labels.ts";
import { tagKind } from "../domain/labels/kinds.ts";
import { deleteLabel } from "../domain/labels/labels.ts";
import { createTag, listTags, MAX_TAG_NAME, MAX_TAGS_PER_OBJECT } from "../domain/labels/tags.ts";
import { defineTool } from "./define.ts";
import { labelName } from "./inputs.ts";
import { deleteLabelTool, setObjectLabelsTool } from "./labels.ts";

export const tagTools = [
  defineTool({
    name: "tags_list",
    title: "List tags",
    description: "Tags by slug, each with its count of live objects.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/tags" },
    input: z.object({
      search: z.string().max(MAX_TAG_NAME).optional().describe("Part of the name or slug, case-insensitive"),
      ...pageInput,
    }),
    output: tagList,
    handler: (input, { deps, caller }) => listTags(deps, caller, input),
  }),
  defineTool({
    name: "tags_create",
    title: "Create a tag",
    description: "Creates a tag, slug from the name. Slug taken: conflict, details.existingId is the tag.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/tags", status: 201 },
    input: z.object({ name: labelName(MAX_TAG_NAME).describe("Name, with a letter or digit") }),
    output: tag,
    errors: ["conflict"],
    handler: (input, { deps, caller }) => createTag(deps, caller, input),
  }),
  deleteLabelTool(tagKind, {
    description:
      "Deletes a tag and takes it off every object.",
    output: tagDeleted,
    remove: (deps, caller, id) => deleteLabel(deps, caller, tagKind, id),
  }),
  setObjectLabelsTool(tagKind, {
    description:
      "tagIds replaces the object's whole tag list ([] removes all); or add/remove tags by name.",
    max: MAX_TAGS_PER_OBJECT,
    output: objectTags,
  }),
];
