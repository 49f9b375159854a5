import { z } from "zod";
import { AUDIT_OUTCOMES, auditPage } from "../contract/audit.ts";
import { listAudit } from "../domain/audit/audit.ts";
import { defineTool } from "./define.ts";
import { DEFAULT_LIMIT, id, MAX_LIMIT, timestampInput } from "../contract/common.ts";

export const auditTools = [
  defineTool({
    name: "audit_list",
    title: "Read the audit log",
    description: "Who changed what, and refused calls, newest first; pass nextCursor as cursor.",
    scope: "admin",
    reach: "organization",
    http: { method: "GET", path: "/audit" },
    input: z.object({
      action: z.string().min(1).max(100).optional().describe("Only this tool's calls, e.g. buckets_delete"),
      apiKeyId: id("API key").optional().describe("Only calls with this key"),
      userId: id("User").optional().describe("Only calls by this user"),
      targetId: id("Target").optional().describe("Only calls naming this id"),
      outcome: z.enum(AUDIT_OUTCOMES).optional().describe("Only this outcome"),
      from: timestampInput("At or after this time").optional(),
      to: timestampInput("At or before this time").optional(),
      limit: z.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT).describe("Page size"),
      cursor: z.string().min(1).max(200).optional().describe("nextCursor of the previous page"),
    }),
    output: auditPage,
    handler: (input, { deps, caller }) => listAudit(deps, caller, input),
  }),
];
