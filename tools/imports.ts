import { z } from "zod";
import { id } from "../contract/common.ts";
import { mediaImport, type MediaImport } from "../contract/imports.ts";
import type { Deps } from "../domain/core/deps.ts";
import { errors } from "../domain/core/errors.ts";
import { getImport, startImport } from "../domain/media/imports.ts";
import type { Caller } from "../domain/access/caller.ts";
import { checkOutboundUrl, OutboundRefused } from "../net/outbound.ts";
import { defineTool, type ToolContext } from "./define.ts";
import { contentType, objectKey, uploadTags } from "./inputs.ts";

/** Longest a call with `wait` holds on; past it the agent polls media_import_get. */
const MAX_WAIT_MS = 120_000;

/**
 * What can be refused before anything is fetched: a scheme other than http(s), credentials in
 * the URL, an address literal of a refused class. Names are checked when the worker connects.
 */
function checkUrl(url: string, deps: Deps): void {
  try {
    checkOutboundUrl(url, { allowPrivate: deps.config.imports.allowPrivate, allowedHosts: null });
  } catch (err) {
    if (err instanceof OutboundRefused) throw errors.validation([{ path: "url", message: err.message }]);
    throw err;
  }
}

/** The state is what an agent follows; the generic line would name the import's id, not the object's. */
function importLine(i: MediaImport): string {
  const bytes = i.totalBytes !== null ? `${i.bytesReceived} of ${i.totalBytes} bytes` : `${i.bytesReceived} bytes`;
  const outcome = i.state === "stored" ? `; objectId ${i.objectId}` : i.state === "failed" && i.error ? `; error ${i.error.code}: ${i.error.message}` : "";
  return `Import ${i.id} ${i.state}: ${JSON.stringify(i.key)}, ${bytes}${outcome}`;
}

/** Polls the import until it settles or the wait ends, reporting progress to the caller that asked for it. */
async function settle(deps: Deps, caller: Caller, started: MediaImport, ctx: ToolContext): Promise<MediaImport> {
  const wait = Math.min(MAX_WAIT_MS, deps.config.imports.timeoutMs + 10_000);
  const until = Date.now() + wait;
  ctx.holdOpen?.(Math.ceil(wait / 1000) + 10);
  let current = started;
  while (current.state !== "stored" && current.state !== "failed" && Date.now() < until) {
    await Bun.sleep(200);
    current = await getImport(deps, caller, started.id);
    ctx.progress?.(current.bytesReceived, current.totalBytes, `${current.state}: ${current.bytesReceived} bytes`);
  }
  return current;
}

export const importTools = [
  defineTool({
    name: "media_import",
    title: "Import a file from a URL",
    description: "Fetches a public http(s) URL into a bucket. A job: poll media_import_get, or pass wait: true.",
    scope: "write",
    reach: "bucket",
    http: { method: "POST", path: "/imports", status: 202 },
    input: z.object({
      bucketId: id("Bucket"),
      key: objectKey,
      url: z.string().min(1).max(2048).describe("Public http(s) URL"),
      size: z.number().int().min(0).max(5 * 1024 ** 4).optional().describe("Expected bytes, reserved against the quota"),
      contentType: contentType.optional(),
      tags: uploadTags.optional(),
      wait: z.boolean().optional().describe("Answer once stored or failed (up to 2 minutes)"),
    }),
    output: mediaImport,
    errors: ["not_found", "quota_exceeded"],
    annotations: { destructiveHint: true, openWorldHint: true },
    handler: async ({ wait, ...input }, ctx) => {
      checkUrl(input.url, ctx.deps);
      const started = await startImport(ctx.deps, ctx.caller, input);
      return wait ? settle(ctx.deps, ctx.caller, started, ctx) : started;
    },
    mcpSummary: importLine,
  }),
  defineTool({
    name: "media_import_get",
    title: "Get an import's state",
    description: "An import's state: queued, fetching, stored (objectId: the object) or failed (error says why).",
    scope: "read",
    reach: "bucket",
    http: { method: "GET", path: "/imports/{id}" },
    input: z.object({ id: id("Import") }),
    output: mediaImport,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => getImport(deps, caller, input.id),
    mcpSummary: importLine,
  }),
];
