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
    description:
      "Tags of the organization ordered by slug, each with the number of live media objects carrying it. " +
      "`search` matches a part of the name or slug, case-insensitively. Use it to find tag ids before objects_set_tags.",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/tags" },
    input: z.object({
      search: z.string().max(MAX_TAG_NAME).optional().describe("Part of a tag name or slug"),
      ...pageInput,
    }),
    output: tagList,
    handler: (input, { deps, caller }) => listTags(deps, caller, input),
  }),
  defineTool({
    name: "tags_create",
    title: "Create a tag",
    description:
      "Creates a tag; its slug is derived from the name (lower case, accents dropped, other characters become '-'). " +
      "A name whose slug already exists is 409 conflict with details.existingId: use that tag instead.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/tags", status: 201 },
    input: z.object({ name: labelName(MAX_TAG_NAME).describe(`Tag name, 1..${MAX_TAG_NAME} characters with at least one letter or digit`) }),
    output: tag,
    errors: ["conflict"],
    handler: (input, { deps, caller }) => createTag(deps, caller, input),
  }),
  deleteLabelTool(tagKind, {
    description:
      "Deletes a tag and removes it from every media object (reported as unassignedObjects). " +
      "Tags are shared by all buckets, so a bucket-restricted key cannot delete them.",
    output: tagDeleted,
    remove: (deps, caller, id) => deleteLabel(deps, caller, tagKind, id),
  }),
  setObjectLabelsTool(tagKind, {
    description:
      "Replaces the complete tag list of a media object with tagIds (it does not append: send every tag the object should keep; [] removes all). " +
      "Any unknown tag id is 404 with details.missingIds and nothing changes. Create missing tags with tags_create first.",
    max: MAX_TAGS_PER_OBJECT,
    output: objectTags,
  }),
];
