import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { categories, objectCategories, objectTags, tags } from "../../db/schema/index.ts";

/**
 * Tags and categories are two kinds of label: a table of the organization's labels and a
 * join table to media objects. What the two share (an object's labels, deleting one, setting
 * an object's list) is written once over this description of what differs.
 */
export interface LabelKind<K extends "tags" | "categories" = "tags" | "categories"> {
  /** Names the label in errors: "Tag", "Category". */
  noun: string;
  /** Where an object's labels of this kind appear in its view and in results. */
  key: K;
  labels: typeof tags | typeof categories;
  links: typeof objectTags | typeof objectCategories;
  /** The join table's column naming the label. */
  labelId: AnyPgColumn;
  /** A join row to insert (the label column's name differs). */
  link: (orgId: string, objectId: string, labelId: string) => { orgId: string; objectId: string; [labelColumn: string]: string };
}

export const tagKind: LabelKind<"tags"> = {
  noun: "Tag",
  key: "tags",
  labels: tags,
  links: objectTags,
  labelId: objectTags.tagId,
  link: (orgId, objectId, tagId) => ({ orgId, objectId, tagId }),
};

export const categoryKind: LabelKind<"categories"> = {
  noun: "Category",
  key: "categories",
  labels: categories,
  links: objectCategories,
  labelId: objectCategories.categoryId,
  link: (orgId, objectId, categoryId) => ({ orgId, objectId, categoryId }),
};

export const LABEL_KINDS = [tagKind, categoryKind] as const;
