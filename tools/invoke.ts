import type { z } from "zod";
import { hasScope } from "../domain/caller.ts";
import { AppError, type ErrorDetail, errors } from "../domain/errors.ts";
import type { AnyTool, ToolContext } from "./define.ts";

/** Unknown keys are refused, so a misspelt optional field is an error, not silently ignored. */
const strictInputs = new WeakMap<AnyTool, z.ZodObject>();
export function strictInput(tool: AnyTool): z.ZodObject {
  let s = strictInputs.get(tool);
  if (!s) strictInputs.set(tool, (s = tool.input.strict()));
  return s;
}

export function toolAllowed(tool: AnyTool, caller: ToolContext["caller"]): boolean {
  return tool.scope === "any" || hasScope(caller, tool.scope);
}

export function zodDetails(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
}

/**
 * The one way any surface runs a tool: scope, input validation, handler, and (when
 * configured) a check that the result matches the declared output schema.
 */
export async function invokeTool(tool: AnyTool, rawInput: unknown, ctx: ToolContext): Promise<unknown> {
  if (!toolAllowed(tool, ctx.caller)) throw errors.forbidden(`This operation needs the '${tool.scope}' scope`);
  const parsed = strictInput(tool).safeParse(rawInput ?? {});
  if (!parsed.success) throw errors.validation(zodDetails(parsed.error));
  const output = await tool.handler(parsed.data, ctx);
  if (ctx.deps.config.validateOutputs) {
    const checked = tool.output.safeParse(output);
    if (!checked.success) {
      throw new AppError("internal_error", `Output of ${tool.name} does not match its schema`, zodDetails(checked.error));
    }
    return checked.data;
  }
  return output;
}
