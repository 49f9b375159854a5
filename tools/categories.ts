import { z } from "zod";
import { id } from "../contract/common.ts";
import { category, categoryDeleted, categoryNodeList, objectCategories } from "../contract/labels.ts";
import { createCategory, deleteCategory, listCategoryTree, MAX_CATEGORIES_PER_OBJECT, MAX_CATEGORY_NAME, moveCategory } from "../domain/labels/categories.ts";
import { categoryKind } from "../domain/labels/kinds.ts";
import { defineTool } from "./define.ts";
import { labelName } from "./inputs.ts";
import { deleteLabelTool, setObjectLabelsTool } from "./labels.ts";

export const categoryTools = [
  defineTool({
    name: "categories_list",
    title: "Category tree",
    description:
      "The organization's whole category tree: data holds the root categories, each with its children nested, siblings ordered by name; " +
      "total counts every category. Not paginated (hasMore is always false).",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/categories" },
    input: z.object({}),
    output: categoryNodeList,
    handler: (_input, { deps, caller }) => listCategoryTree(deps, caller),
  }),
  defineTool({
    name: "categories_create",
    title: "Create a category",
    description:
      "Creates a category at the root, or under parentId (a category of the organization). The slug comes from the name; " +
      "when it is taken, the first free -2, -3 ... suffix is added. categories_move moves it later.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/categories", status: 201 },
    input: z.object({
      name: labelName(MAX_CATEGORY_NAME).describe(`Category name, 1..${MAX_CATEGORY_NAME} characters with at least one letter or digit`),
      parentId: id("Parent category").optional().describe("Omit for a root category"),
    }),
    output: category,
    errors: ["not_found", "conflict"],
    handler: (input, { deps, caller }) => createCategory(deps, caller, input),
  }),
  defineTool({
    name: "categories_move",
    title: "Move a category",
    description:
      "Moves a category, with everything below it, under parentId, or to the root when parentId is null. " +
      "409 conflict when parentId is the category itself or one of its descendants. Filters by the category include its new descendants at once. " +
      "Categories are shared by all buckets, so a bucket-restricted key cannot move them.",
    scope: "write",
    reach: "organization",
    http: { method: "PUT", path: "/categories/{id}/parent" },
    input: z.object({
      id: id("Category"),
      parentId: id("Parent category").nullable().describe("The new parent, or null for the root"),
    }),
    output: category,
    errors: ["not_found", "conflict"],
    handler: (input, { deps, caller }) => moveCategory(deps, caller, input.id, input.parentId),
  }),
  deleteLabelTool(categoryKind, {
    description:
      "Deletes one category: its children move to the root (they are not deleted) and it is removed from every media object, in one step. " +
      "Categories are shared by all buckets, so a bucket-restricted key cannot delete them.",
    output: categoryDeleted,
    remove: deleteCategory,
  }),
  setObjectLabelsTool(categoryKind, {
    description:
      "Replaces the categories of a media object with categoryIds (not appended: send all of them; [] removes all). " +
      "Any unknown category id is 404 with details.missingIds and nothing changes.",
    max: MAX_CATEGORIES_PER_OBJECT,
    output: objectCategories,
  }),
];
