import type { Deps } from "../domain/core/deps.ts";
import type { AnyTool } from "../tools/define.ts";
import { invokeTool } from "../tools/invoke.ts";
import { json, jsonText } from "../http/respond.ts";
import { JsonBody } from "../domain/core/json-body.ts";
import { gatherInput } from "./input.ts";
import { callerOf, type HttpContext } from "../http/pipeline.ts";

/** The last step of a REST request: gather the input, run the tool, render the result. */
export function runToolOverHttp(tool: AnyTool, deps: Deps, params: Record<string, string>) {
  return async (ctx: HttpContext): Promise<Response> => {
    const input = await gatherInput(tool, ctx.request, ctx.url, params, deps.config.maxBodyBytes);
    const toolCtx = { caller: callerOf(ctx), deps, requestId: ctx.requestId, request: ctx.request, origin: ctx.url.origin, clientAddress: ctx.clientAddress, ...(ctx.holdOpen ? { holdOpen: ctx.holdOpen } : {}) };
    const output = await invokeTool(tool, input, toolCtx, { asBody: !tool.restResponse });
    if (tool.restResponse) return tool.restResponse(output as never, ctx.request, toolCtx);
    if (output instanceof JsonBody) return jsonText(tool.http.status ?? 200, output.text);
    return json(tool.http.status ?? 200, output);
  };
}

/** `/buckets/{id}` (OpenAPI style, used in definitions) to `/buckets/:id` (router style). */
export function routerPath(path: string): string {
  return `/api${path.replace(/\{(\w+)\}/g, ":$1")}`;
}
