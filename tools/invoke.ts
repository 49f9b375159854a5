import { AsyncLocalStorage } from "node:async_hooks";
import type { z } from "zod";
import { onBehalfOf } from "../db/pglite-lanes.ts";
import { inSpan } from "../telemetry/spans.ts";
import { AppError, type ErrorDetail, errors } from "../domain/core/errors.ts";
import { assertMayUse } from "./access.ts";
import { auditCall } from "./audit-trail.ts";
import type { AnyTool, ToolContext } from "./define.ts";
import { failureStatus } from "./failure.ts";
import { JsonBody, valueOf } from "../domain/core/json-body.ts";

/**
 * What the request being served learns of the tool it ran, for its metrics: which tool, and
 * the status of its failure (over MCP the HTTP answer is 200 whatever the tool did).
 */
export interface ToolCallNote {
  tool: string | null;
  failedWith: number | null;
}
export const toolCallNotes = new AsyncLocalStorage<ToolCallNote>();

/** Unknown keys are refused, so a misspelt optional field is an error, not silently ignored. */
const strictInputs = new WeakMap<AnyTool, z.ZodObject>();
export function strictInput(tool: AnyTool): z.ZodObject {
  let s = strictInputs.get(tool);
  if (!s) strictInputs.set(tool, (s = tool.input.strict()));
  return s;
}

/**
 * One detail per issue, up to a bound: a body of thousands of bad entries (a metadata object
 * is a record) would otherwise get an answer several times its own size.
 */
const MAX_DETAILS = 50;
const MAX_LISTED_KEYS = 10;
function issueMessage(issue: z.core.$ZodIssue): string {
  // Zod names every unknown key in one message; thousands of them would make it huge.
  if (issue.code === "unrecognized_keys" && (issue.keys.length > MAX_LISTED_KEYS || issue.keys.some((k) => k.length > 100))) {
    const listed = issue.keys.slice(0, MAX_LISTED_KEYS).map((k) => JSON.stringify(k.length > 100 ? `${k.slice(0, 100)}…` : k));
    const more = issue.keys.length - listed.length;
    return `Unrecognized key${issue.keys.length > 1 ? "s" : ""}: ${listed.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
  }
  return issue.message;
}
export function zodDetails(error: z.ZodError): ErrorDetail[] {
  const details = error.issues.slice(0, MAX_DETAILS).map((i) => ({ path: i.path.map(String).join("."), message: issueMessage(i) }));
  const more = error.issues.length - details.length;
  if (more > 0) details.push({ path: "", message: `${more} more issues not listed` });
  return details;
}

/**
 * PostgreSQL text cannot hold NUL, and no field has a use for one: refused here for every
 * tool, so a stray \u0000 is a 400 naming the field, not a failed query. The same goes for a
 * lone UTF-16 surrogate (JSON's "\ud800"), which has no UTF-8 form: PostgreSQL's jsonb and
 * text refuse it. Keys count too (metadata). Inputs have passed their schema, so the walk is
 * over a bounded shape.
 */
function unstorableStringPaths(value: unknown, path: string[] = [], out: { path: string; message: string }[] = []): { path: string; message: string }[] {
  const problem = (s: string) => (s.includes("\u0000") ? NUL_MESSAGE : !s.isWellFormed() ? SURROGATE_MESSAGE : null);
  if (typeof value === "string") {
    const p = problem(value);
    if (p) out.push({ path: path.join("."), message: p });
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const p = problem(k);
      if (p) out.push({ path: [...path, k].join("."), message: p });
      else unstorableStringPaths(v, [...path, k], out);
    }
  }
  return out;
}
const NUL_MESSAGE = "Must not contain NUL (\\u0000) characters";
const SURROGATE_MESSAGE = "Must be well-formed Unicode: a lone surrogate (\\ud800-\\udfff) has no UTF-8 form";

/**
 * The one way any surface runs a tool: access (scope and reach), input validation, handler, and (when
 * configured) a check that the result matches the declared output schema. Every call of a tool
 * that changes something, and every refused call, ends with an audit entry (audit-trail.ts).
 * The answer is the output's value; with `asBody` (REST), an answer the handler gave as JSON text
 * stays a JsonBody.
 */
export function invokeTool(tool: AnyTool, rawInput: unknown, ctx: ToolContext, opts: { asBody?: boolean } = {}): Promise<unknown> {
  // The embedded database takes organizations' statements in turns (db/pglite-lanes.ts).
  return onBehalfOf.run(ctx.caller.orgId, async () => {
    const output = await invokeAudited(tool, rawInput, ctx);
    return opts.asBody ? output : valueOf(output);
  });
}

async function invokeAudited(tool: AnyTool, rawInput: unknown, ctx: ToolContext): Promise<unknown> {
  const note = toolCallNotes.getStore();
  if (note) note.tool = tool.name;
  let output: unknown;
  try {
    output = await inSpan(`tool ${tool.name}`, { "media.tool": tool.name, "media.request_id": ctx.requestId }, () => runTool(tool, rawInput, ctx));
  } catch (err) {
    if (note) note.failedWith = failureStatus(err);
    await auditCall(tool, rawInput, ctx, { error: err });
    throw err;
  }
  await auditCall(tool, rawInput, ctx, { output });
  return output;
}

async function runTool(tool: AnyTool, rawInput: unknown, ctx: ToolContext): Promise<unknown> {
  assertMayUse(tool, ctx.caller);
  const parsed = strictInput(tool).safeParse(rawInput ?? {});
  if (!parsed.success) throw errors.validation(zodDetails(parsed.error));
  const unstorable = unstorableStringPaths(parsed.data);
  if (unstorable.length) throw errors.validation(unstorable);
  const output = await tool.handler(parsed.data, ctx);
  if (ctx.deps.config.validateOutputs) {
    const value = valueOf(output);
    const checked = tool.output.safeParse(value);
    if (!checked.success) {
      throw new AppError("internal_error", `Output of ${tool.name} does not match its schema`, zodDetails(checked.error));
    }
    // Text is sent as written: a field the schema does not know would reach the client.
    if (output instanceof JsonBody && !Bun.deepEquals(value, checked.data, true)) {
      throw new AppError("internal_error", `Output of ${tool.name} holds more than its schema describes`);
    }
    return output instanceof JsonBody ? output : checked.data;
  }
  return output;
}
