import { z } from "zod";
import { id } from "../contract/common.ts";
import type { Caller } from "../domain/access/caller.ts";
import type { Deps } from "../domain/core/deps.ts";
import type { LabelKind } from "../domain/labels/kinds.ts";
import { setObjectLabels } from "../domain/labels/labels.ts";
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

export function setObjectLabelsTool(kind: LabelKind, spec: { description: string; max: number; output: z.ZodObject }) {
  const field = `${singular(kind)}Ids`;
  return defineTool({
    name: `objects_set_${kind.key}`,
    title: `Set a media object's ${kind.key}`,
    description: spec.description,
    scope: "write",
    reach: "bucket",
    http: { method: "PUT", path: `/objects/{id}/${kind.key}` },
    input: z.object({
      id: id("Media object"),
      [field]: z.array(id(kind.noun)).max(spec.max).describe(`The object's ${kind.key} after the call`),
    }),
    output: spec.output,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => setObjectLabels(deps, caller, kind, input.id as string, input[field] as string[]),
  });
}
