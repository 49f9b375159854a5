import { z } from "zod";
import { AUDIT_OUTCOMES, auditPage } from "../contract/audit.ts";
import { listAudit } from "../domain/audit/audit.ts";
import { defineTool } from "./define.ts";
import { DEFAULT_LIMIT, id, MAX_LIMIT, timestampInput } from "../contract/common.ts";

export const auditTools = [
  defineTool({
    name: "audit_list",
    title: "Read the audit log",
    description:
      "Who changed what in the organization, and every refused call: the tool, the ids it named, the key or user, the address, the status. " +
      "Newest first; pass nextCursor as cursor for the next page.",
    scope: "admin",
    reach: "organization",
    http: { method: "GET", path: "/audit" },
    input: z.object({
      action: z.string().min(1).max(100).optional().describe("Only calls of this tool (e.g. buckets_delete)"),
      apiKeyId: id("API key").optional().describe("Only calls made with this key"),
      userId: id("User").optional().describe("Only calls made by this user (with a key of theirs or a dashboard JWT)"),
      targetId: id("Target").optional().describe("Only calls that named or created this id"),
      outcome: z.enum(AUDIT_OUTCOMES).optional(),
      from: timestampInput("Entries at or after this time").optional(),
      to: timestampInput("Entries at or before this time").optional(),
      limit: z.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT).describe(`Page size, 1..${MAX_LIMIT}`),
      cursor: z.string().min(1).max(200).optional().describe("nextCursor of the previous page"),
    }),
    output: auditPage,
    handler: (input, { deps, caller }) => listAudit(deps, caller, input),
  }),
];
