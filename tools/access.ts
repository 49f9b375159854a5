import { type Caller, hasScope } from "../domain/access/caller.ts";
import { errors } from "../domain/core/errors.ts";
import type { AnyTool } from "./define.ts";

/** What access decisions read of a caller: its scopes and its bucket restriction. */
export type Credential = Pick<Caller, "scopes" | "bucketId">;

/** Why a credential may not use a tool, or null when it may. */
export function refusal(tool: Pick<AnyTool, "scope" | "reach">, credential: Credential): "scope" | "reach" | null {
  if (tool.scope !== "any" && !hasScope(credential, tool.scope)) return "scope";
  if (tool.reach === "organization" && credential.bucketId !== null) return "reach";
  return null;
}

/**
 * The one answer to "may this caller use this tool": REST and MCP calls, MCP `tools/list`
 * and the tests all ask it. A tool it refuses is neither listed nor run.
 */
export function mayUse(tool: Pick<AnyTool, "scope" | "reach">, credential: Credential): boolean {
  return refusal(tool, credential) === null;
}

export function toolsFor(tools: readonly AnyTool[], credential: Credential): AnyTool[] {
  return tools.filter((t) => mayUse(t, credential));
}

/** Throws the 403 the surfaces send for a tool the caller may not use. */
export function assertMayUse(tool: AnyTool, credential: Credential): void {
  const why = refusal(tool, credential);
  if (why === "scope") throw errors.forbidden(`This operation needs the '${tool.scope}' scope`);
  if (why === "reach") {
    throw errors.forbidden(`A key restricted to one bucket cannot use ${tool.name}: it acts on what the whole organization shares`);
  }
}
