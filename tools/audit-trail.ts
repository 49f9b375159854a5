import { actorOf, recordAudit } from "../domain/audit/audit-writer.ts";
import type { AnyTool, ToolContext } from "./define.ts";
import { classifyError } from "./failure.ts";

/**
 * What the audit log keeps of a tool call: the tool, the ids it named (input fields `id`,
 * `...Id`, `...Ids` holding UUIDs) and the id it made, the caller, the address, the status.
 * Nothing else of the input or output is kept, so no secret, name or metadata value can
 * reach it. Reads are recorded only when refused (401/403); every call of a tool that
 * changes something is recorded, whatever its outcome.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isId = (v: unknown): v is string => typeof v === "string" && UUID.test(v);
const MAX_IDS = 50;

export function targetsOf(input: unknown, output: unknown): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (input && typeof input === "object" && !Array.isArray(input)) {
    for (const [field, value] of Object.entries(input)) {
      if (field === "id" || field.endsWith("Id")) {
        if (isId(value)) out[field] = value;
      } else if (field.endsWith("Ids") && Array.isArray(value)) {
        const ids = value.filter(isId).slice(0, MAX_IDS);
        if (ids.length > 0) out[field] = ids;
      }
    }
  }
  // What a create made (a bucket, a key, an endpoint): its id, when the call named none.
  const made = (output as { id?: unknown } | null)?.id;
  if (!("id" in out) && isId(made)) out.id = made;
  return out;
}

export async function auditCall(tool: AnyTool, input: unknown, ctx: ToolContext, outcome: { output: unknown } | { error: unknown }): Promise<void> {
  const failure = "error" in outcome ? classifyError(outcome.error) : null;
  const status = failure ? failure.status : (tool.http.status ?? 200);
  const refused = status === 401 || status === 403;
  if (tool.annotations.readOnlyHint && !refused) return;
  try {
    const entry = {
      orgId: ctx.caller.orgId,
      actor: actorOf(ctx.caller),
      action: tool.name,
      targets: targetsOf(input, "output" in outcome ? outcome.output : null),
      status,
      errorCode: failure?.code ?? null,
      clientAddress: ctx.clientAddress ?? null,
      requestId: ctx.requestId,
    };
    await (ctx.deps.audit ? ctx.deps.audit.write(entry, { flush: !tool.unflushed }) : recordAudit(ctx.deps.db, entry));
  } catch (err) {
    // The call's own outcome stands; a lost entry is logged (the database being down is the usual cause).
    ctx.deps.log.warn("audit entry not written", { requestId: ctx.requestId, tool: tool.name, error: String(err) });
  }
}
