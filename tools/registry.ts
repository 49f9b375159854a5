import type { AnyTool } from "./define.ts";
import { billingTools } from "./billing.ts";
import { bucketTools } from "./buckets.ts";
import { categoryTools } from "./categories.ts";
import { derivativeTools } from "./derivatives.ts";
import { identityTools } from "./identity.ts";
import { mediaTools } from "./media.ts";
import { presignTools } from "./presign.ts";
import { searchTools } from "./search.ts";
import { setTools } from "./sets.ts";
import { storyboardTools } from "./storyboards.ts";
import { tagTools } from "./tags.ts";
import { usageTools } from "./usage.ts";

/**
 * Every capability of the service. REST routes, MCP tools, OpenAPI operations and CLI
 * commands are all loops over this list; adding a capability means adding a tool here.
 */
export const registry: readonly AnyTool[] = [
  ...identityTools,
  ...bucketTools,
  ...mediaTools,
  ...derivativeTools,
  ...presignTools,
  ...searchTools,
  ...tagTools,
  ...categoryTools,
  ...setTools,
  ...storyboardTools,
  ...usageTools,
  ...billingTools,
];

export function findTool(name: string): AnyTool | undefined {
  return registry.find((t) => t.name === name);
}
