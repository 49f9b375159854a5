import { commandPath } from "../cli/commands.ts";
import { flagOf, flagsFromSchema } from "../cli/flags.ts";
import { type AnyTool, type HttpMethod, pathParams, type Reach, type ToolAnnotations } from "../tools/define.ts";
import { inputJsonSchema, type JsonSchema, outputJsonSchema } from "../tools/json-schema.ts";
import { registry } from "../tools/registry.ts";
import type { Scope } from "../domain/access/caller.ts";

/**
 * What the console knows of a tool, generated from the registry when the console is built:
 * the browser gets the same names, routes, scopes and schemas the server uses, never a
 * hand-kept copy.
 */
export interface ToolMeta {
  name: string;
  title: string;
  description: string;
  scope: Scope | "any";
  reach: Reach;
  http: { method: HttpMethod; path: string; status?: number; produces?: string };
  annotations: ToolAnnotations;
  errors: string[];
  input: JsonSchema;
  output: JsonSchema;
  /** REST answers a redirect (media_stream): a page cannot read its target, so the console asks over MCP. */
  redirects: boolean;
  /** The same tool as a `media` command: its words, positional path parameters and flags. */
  cli: { words: string[]; params: string[]; flags: { name: string; flag: string; type: string; list: boolean }[] };
}

export function toolMeta(tool: AnyTool): ToolMeta {
  const input = inputJsonSchema(tool);
  const params = pathParams(tool.http.path);
  const status = tool.http.status ?? 200;
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    scope: tool.scope,
    reach: tool.reach,
    http: { ...tool.http },
    annotations: tool.annotations,
    errors: tool.errors,
    input,
    output: outputJsonSchema(tool),
    redirects: status >= 300 && status < 400,
    cli: {
      words: commandPath(tool),
      params,
      flags: flagsFromSchema(input, params).map((f) => ({ name: f.name, flag: flagOf(f), type: f.type, list: f.list === true })),
    },
  };
}

/** What every page needs to call a tool and to decide whether to offer it; the schemas stay with the explorer. */
export type ToolRoute = Pick<ToolMeta, "name" | "title" | "scope" | "reach" | "http" | "annotations" | "redirects">;

export function routeOf(meta: ToolMeta): ToolRoute {
  const { name, title, scope, reach, http, annotations, redirects } = meta;
  return { name, title, scope, reach, http, annotations, redirects };
}

export function registryMeta(tools: readonly AnyTool[] = registry): ToolMeta[] {
  return tools.map(toolMeta);
}
