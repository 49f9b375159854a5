import { z } from "zod";
import {
  type CategoryNode,
  createCategory,
  deleteCategory,
  listCategoryTree,
  MAX_CATEGORIES_PER_OBJECT,
  moveCategory,
  MAX_CATEGORY_NAME,
  setObjectCategories,
} from "../domain/labels/categories.ts";
import { defineTool } from "./define.ts";
import { deleted, id, listOf, timestamp } from "./schemas.ts";
import { label, labelName } from "./tags.ts";

const categoryFields = {
  id: id("Category"),
  name: z.string(),
  slug: z.string().describe("Unique in the organization (a repeated name gets a -2, -3 ... suffix); search filters use it"),
  parentId: id("Parent category").nullable().describe("null for a root category"),
  createdAt: timestamp("Creation time"),
};

export const category = z.object(categoryFields);

// Recursive: OpenAPI gets it as the component CategoryNode.
export const categoryNode: z.ZodType<CategoryNode> = z
  .object({
    ...categoryFields,
    objectCount: z.number().int().describe("Live media objects directly in this category (a bucket-restricted key counts only its bucket)"),
    get children() {
      return z.array(categoryNode).describe("Child categories, ordered by name");
    },
  })
  .meta({ id: "CategoryNode" });

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
    output: listOf(categoryNode),
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
  defineTool({
    name: "categories_delete",
    title: "Delete a category",
    description:
      "Deletes one category: its children move to the root (they are not deleted) and it is removed from every media object, in one step. " +
      "Categories are shared by all buckets, so a bucket-restricted key cannot delete them.",
    scope: "delete",
    reach: "organization",
    http: { method: "DELETE", path: "/categories/{id}" },
    input: z.object({ id: id("Category") }),
    output: deleted("Category").extend({
      childrenMovedToRoot: z.number().int().describe("Direct children now at the root"),
      unassignedObjects: z.number().int().describe("Objects that were in the category"),
    }),
    errors: ["not_found"],
    handler: (input, { deps, caller }) => deleteCategory(deps, caller, input.id),
  }),
  defineTool({
    name: "objects_set_categories",
    title: "Set a media object's categories",
    description:
      "Replaces the categories of a media object with categoryIds (not appended: send all of them; [] removes all). " +
      "Any unknown category id is 404 with details.missingIds and nothing changes.",
    scope: "write",
    reach: "bucket",
    http: { method: "PUT", path: "/objects/{id}/categories" },
    input: z.object({
      id: id("Media object"),
      categoryIds: z.array(id("Category")).max(MAX_CATEGORIES_PER_OBJECT).describe(`The object's categories after the call, at most ${MAX_CATEGORIES_PER_OBJECT}`),
    }),
    output: z.object({ objectId: id("Media object"), categories: z.array(label("Category")).describe("The object's categories now, by slug") }),
    errors: ["not_found"],
    handler: (input, { deps, caller }) => setObjectCategories(deps, caller, input.id, input.categoryIds),
  }),
];
