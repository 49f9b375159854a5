import pkg from "../package.json" with { type: "json" };
import type { AnyTool } from "./define.ts";
import { billingTools } from "./billing.ts";
import { bucketTools } from "./buckets.ts";
import { categoryTools } from "./categories.ts";
import { derivativeTools } from "./derivatives.ts";
import { identityTools } from "./identity.ts";
import { mediaTools } from "./media.ts";
import { objectTools } from "./objects.ts";
import { presignTools } from "./presign.ts";
import { importTools } from "./imports.ts";
import { reconcileTools } from "./reconcile.ts";
import { renderTools } from "./render.ts";
import { searchTools } from "./search.ts";
import { similarTools } from "./similar.ts";
import { serviceCredentialTools } from "./service-credentials.ts";
import { setTools } from "./sets.ts";
import { storyboardTools } from "./storyboards.ts";
import { tagTools } from "./tags.ts";
import { usageTools } from "./usage.ts";
import { webhookTools } from "./webhooks.ts";
import { auditTools } from "./audit.ts";
import { trashTools } from "./trash.ts";
import { oauthTools } from "./oauth.ts";

/**
 * Every capability of the service. REST routes, MCP tools, OpenAPI operations and CLI
 * commands are all loops over this list; adding a capability means adding a tool here.
 */
export const registry: readonly AnyTool[] = [
  ...identityTools,
  ...serviceCredentialTools,
  ...oauthTools,
  ...bucketTools,
  ...mediaTools,
  ...objectTools,
  ...trashTools,
  ...derivativeTools,
  ...renderTools,
  ...presignTools,
  ...importTools,
  ...searchTools,
  ...similarTools,
  ...tagTools,
  ...categoryTools,
  ...setTools,
  ...storyboardTools,
  ...usageTools,
  ...billingTools,
  ...reconcileTools,
  ...webhookTools,
  ...auditTools,
];

export function findTool(name: string): AnyTool | undefined {
  return registry.find((t) => t.name === name);
}

/** The service's identity, as MCP's initialize and the OpenAPI document's info give it. */
export const SERVER_INFO = { name: "media-storage", version: pkg.version };

/** What an agent reads first (MCP initialize): how the tools fit together. */
export const INSTRUCTIONS = `Media storage: buckets of media objects (images, video, audio, PDFs, 3D, other files) with tags, categories, sets, storyboards and search.
Bytes never travel through tool arguments. To upload: call presign_upload (or the multipart tools for large files), PUT the bytes to the returned url with the returned headers, then call presign_confirm. A file at a public URL: media_import (a job; media_import_get polls it). To download: presign_download returns a short-lived URL.
Ids are UUIDs. Lists take limit (1..200, default 50) and offset, and answer { data, total, hasMore }.
Tools you do not see need scopes your credential lacks, or act on the whole organization while your key is restricted to one bucket, or were left out by this session's toolsets or readonly parameters (the bare /mcp URL lists all).`;
