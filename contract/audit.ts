import { z } from "zod";
import { id, timestamp } from "./common.ts";

export const AUDIT_OUTCOMES = ["succeeded", "failed", "refused"] as const;

export const auditEntry = z
  .object({
    id: id("Entry"),
    at: timestamp("When the call ended"),
    actor: z.object({
      type: z
        .enum(["api_key", "user", "service_credential", "system"])
        .describe("api_key: a key's secret; user: a dashboard JWT; service_credential: a signed request; system: the service itself"),
      apiKeyId: z.uuid().nullable(),
      serviceCredentialId: z.uuid().nullable(),
      userId: z.uuid().nullable(),
    }),
    action: z.string().describe("The tool called (its MCP name and OpenAPI operationId), or what the service did (webhook_endpoint_disabled)"),
    targets: z.record(z.string(), z.union([z.string(), z.array(z.string())])).describe("Ids the call named or created, by field: { id, bucketId, tagIds }"),
    status: z.number().int().describe("HTTP status the call ended with (for MCP calls too)"),
    outcome: z.enum(AUDIT_OUTCOMES).describe("succeeded: 2xx/3xx; refused: 401 or 403; failed: any other error"),
    errorCode: z.string().nullable(),
    clientAddress: z.string().nullable().describe("The address the request came from"),
    requestId: z.string().nullable().describe("The request id (X-Request-Id) of the call"),
  })
  .meta({ id: "AuditEntry" });
export type AuditEntry = z.output<typeof auditEntry>;

export const auditPage = z
  .object({
    data: z.array(auditEntry),
    hasMore: z.boolean().describe("True when another page follows"),
    nextCursor: z.string().nullable().describe("Pass as cursor for the next page; null on the last"),
  })
  .meta({ id: "AuditPage" });
export type AuditPage = z.output<typeof auditPage>;
