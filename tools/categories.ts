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
    description: "The whole category tree: roots in data, children nested, siblings by name. Not paged.",
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
    description: "Creates a category at the root or under parentId; slug from the name.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/categories", status: 201 },
    input: z.object({
      name: labelName(MAX_CATEGORY_NAME).describe("Name, with a letter or digit"),
      parentId: id("Parent category").optional().describe("Parent category; omit for a root"),
    }),
    output: category,
    errors: ["not_found", "conflict"],
    handler: (input, { deps, caller }) => createCategory(deps, caller, input),
  }),
  defineTool({
    name: "categories_move",
    title: "Move a category",
    description: "Moves a category and its branch under a new parent or to the root (conflict: into its own branch).",
    scope: "write",
    reach: "organization",
    http: { method: "PUT", path: "/categories/{id}/parent" },
    input: z.object({
      id: id("Category"),
      parentId: id("Parent category").nullable().describe("New parent, or null for the root"),
    }),
    output: category,
    errors: ["not_found", "conflict"],
    handler: (input, { deps, caller }) => moveCategory(deps, caller, input.id, input.parentId),
  }),
  deleteLabelTool(categoryKind, {
    description:
      "Deletes a category: its children move to the root; it leaves every object.",
    output: categoryDeleted,
    remove: deleteCategory,
  }),
  setObjectLabelsTool(categoryKind, {
    description:
      "Replaces an object's categories with categoryIds ([] removes all).",
    max: MAX_CATEGORIES_PER_OBJECT,
    output: objectCategories,
  }),
];
