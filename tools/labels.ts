import { z } from "zod";
import { id } from "../contract/common.ts";
import type { Caller } from "../domain/access/caller.ts";
import type { Deps } from "../domain/core/deps.ts";
import type { LabelKind } from "../domain/labels/kinds.ts";
import { errors } from "../domain/core/errors.ts";
import { setObjectLabels } from "../domain/labels/labels.ts";
import { changeObjectTags } from "../domain/labels/tag-changes.ts";
import { defineTool } from "./define.ts";

/**
 * The two tools tags and categories have in common, made from the label kind: deleting one
 * (`tags_delete`, `categories_delete`) and setting an object's list (`objects_set_tags`,
 * `objects_set_categories`). What is said to the agent stays each kind's own.
 */
const singular = (kind: LabelKind) => kind.noun.toLowerCase();

export function deleteLabelTool<O extends z.ZodObject>(
  kind: LabelKind,
  spec: { description: string; output: O; remove: (deps: Deps, caller: Caller, id: string) => Promise<z.input<O>> },
) {
  return defineTool({
    name: `${kind.key}_delete`,
    title: `Delete a ${singular(kind)}`,
    description: spec.description,
    scope: "delete",
    reach: "organization",
    http: { method: "DELETE", path: `/${kind.key}/{id}` },
    input: z.object({ id: id(kind.noun) }),
    output: spec.output,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => spec.remove(deps, caller, input.id),
  });
}

/** Tags only: names to add (new ones created) and to remove, beside or instead of the whole list. */
const tagRef = z.string().trim().min(1).max(128);
const changes = {
  add: z.array(tagRef).max(100).optional().describe("Tags to add (id, slug or name; a new name creates one)"),
  remove: z.array(tagRef).max(100).optional().describe("Tags to remove: id, slug or name"),
};

export function setObjectLabelsTool(kind: LabelKind, spec: { description: string; max: number; output: z.ZodObject }) {
  const field = `${singular(kind)}Ids`;
  const byName = kind.key === "tags";
  return defineTool({
    name: `objects_set_${kind.key}`,
    title: `Set a media object's ${kind.key}`,
    description: spec.description,
    scope: "write",
    reach: "bucket",
    http: { method: "PUT", path: `/objects/{id}/${kind.key}` },
    input: z.object({
      id: id("Media object"),
      ...(byName
        ? { [field]: z.array(id(kind.noun)).max(spec.max).optional().describe("The whole tag list after the call"), ...changes }
        : { [field]: z.array(id(kind.noun)).max(spec.max).describe(`The object's ${kind.key} after the call`) }),
    }),
    output: spec.output,
    errors: ["not_found"],
    handler: async (raw, { deps, caller }) => {
      const input = raw as Record<string, unknown>;
      const objectId = input.id as string;
      const whole = input[field] as string[] | undefined;
      const add = (input.add as string[] | undefined) ?? [];
      const remove = (input.remove as string[] | undefined) ?? [];
      if (!byName) return setObjectLabels(deps, caller, kind, objectId, whole!);
      if (whole !== undefined && (add.length || remove.length)) throw errors.validation([{ path: field, message: `Send either ${field} (the whole list) or add/remove, not both` }]);
      if (whole !== undefined) return setObjectLabels(deps, caller, kind, objectId, whole);
      if (!add.length && !remove.length) throw errors.validation([{ path: field, message: `Nothing to change: send ${field} (the whole list), or add and/or remove` }]);
      return changeObjectTags(deps, caller, objectId, { add, remove });
    },
  });
}
