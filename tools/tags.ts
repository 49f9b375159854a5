import { z } from "zod";
import { MAX_TAG_NAME, MAX_TAGS_PER_OBJECT, createTag, deleteTag, listTags, setObjectTags } from "../domain/labels/tags.ts";
import { id, listOf, pageInput } from "../contract/common.ts";
import { objectTags, tag, tagDeleted } from "../contract/labels.ts";
import { defineTool } from "./define.ts";
import { labelName } from "./inputs.ts";

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
    output: listOf(tag),
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
  defineTool({
    name: "tags_delete",
    title: "Delete a tag",
    description:
      "Deletes a tag and removes it from every media object (reported as unassignedObjects). " +
      "Tags are shared by all buckets, so a bucket-restricted key cannot delete them.",
    scope: "delete",
    reach: "organization",
    http: { method: "DELETE", path: "/tags/{id}" },
    input: z.object({ id: id("Tag") }),
    output: tagDeleted,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => deleteTag(deps, caller, input.id),
  }),
  defineTool({
    name: "objects_set_tags",
    title: "Set a media object's tags",
    description:
      "Replaces the complete tag list of a media object with tagIds (it does not append: send every tag the object should keep; [] removes all). " +
      "Any unknown tag id is 404 with details.missingIds and nothing changes. Create missing tags with tags_create first.",
    scope: "write",
    reach: "bucket",
    http: { method: "PUT", path: "/objects/{id}/tags" },
    input: z.object({
      id: id("Media object"),
      tagIds: z.array(id("Tag")).max(MAX_TAGS_PER_OBJECT).describe(`The object's tags after the call, at most ${MAX_TAGS_PER_OBJECT}`),
    }),
    output: objectTags,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => setObjectTags(deps, caller, input.id, input.tagIds),
  }),
];
