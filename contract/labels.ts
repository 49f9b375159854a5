import { z } from "zod";
import { deleted, id, listOf, timestamp } from "./common.ts";

/** A tag or category as a media object carries it. */
export const label = z.object({ id: id("Label"), name: z.string(), slug: z.string() }).meta({ id: "Label" });
export type Label = z.output<typeof label>;

export const tag = z
  .object({
    id: id("Tag"),
    name: z.string(),
    slug: z.string().describe("Derived from the name, unique in the organization; search filters use it"),
    objectCount: z.number().int().describe("Live media objects carrying the tag (a bucket-restricted key counts only its bucket)"),
    createdAt: timestamp("Creation time"),
  })
  .meta({ id: "Tag" });
export type Tag = z.output<typeof tag>;

export const tagList = listOf(tag);

const categoryBase = z.object({
  id: id("Category"),
  name: z.string(),
  slug: z.string().describe("Unique in the organization (a repeated name gets a -2, -3 ... suffix); search filters use it"),
  parentId: id("Parent category").nullable().describe("null for a root category"),
  createdAt: timestamp("Creation time"),
});

export const category = categoryBase.meta({ id: "Category" });
export type Category = z.output<typeof category>;

/** The tree `categories_list` answers: recursive, so it is a reference even where other shapes are written in place. */
export const categoryNode = categoryBase
  .extend({
    objectCount: z.number().int().describe("Live media objects directly in this category (a bucket-restricted key counts only its bucket)"),
    get children(): z.ZodArray<typeof categoryNode> {
      return z.array(categoryNode).describe("Child categories, ordered by name");
    },
  })
  .meta({ id: "CategoryNode" });
export type CategoryNode = z.output<typeof categoryNode>;

export const categoryNodeList = listOf(categoryNode);

export const tagDeleted = deleted.extend({ unassignedObjects: z.number().int().describe("Objects that carried the tag") }).meta({ id: "TagDeleted" });
export type TagDeleted = z.output<typeof tagDeleted>;

export const categoryDeleted = deleted.extend({
  childrenMovedToRoot: z.number().int().describe("Direct children now at the root"),
  unassignedObjects: z.number().int().describe("Objects that were in the category"),
}).meta({ id: "CategoryDeleted" });
export type CategoryDeleted = z.output<typeof categoryDeleted>;

export const objectTags = z.object({ objectId: id("Media object"), tags: z.array(label).describe("The object's tags now, by slug") }).meta({ id: "ObjectTags" });
export type ObjectTags = z.output<typeof objectTags>;

export const objectCategories = z
  .object({ objectId: id("Media object"), categories: z.array(label).describe("The object's categories now, by slug") })
  .meta({ id: "ObjectCategories" });
export type ObjectCategories = z.output<typeof objectCategories>;
