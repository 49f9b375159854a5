import { z } from "zod";
import { DEFAULT_KEY_DAYS, MAX_KEY_DAYS } from "../domain/access/api-keys.ts";
import { createServiceCredential, deleteServiceCredential, listServiceCredentials } from "../domain/access/service-credentials.ts";
import { deleted, id, pageInput, scope } from "../contract/common.ts";
import { serviceCredentialList, serviceCredentialWithSecret } from "../contract/service-credentials.ts";
import { defineTool } from "./define.ts";

/** Credentials for services that sign their requests instead of sending a bearer (docs/signed-requests.md). */
export const serviceCredentialTools = [
  defineTool({
    name: "service_credentials_list",
    title: "List service credentials",
    description: "Service credentials (never secrets), newest first.",
    scope: "admin",
    reach: "bucket",
    http: { method: "GET", path: "/service-credentials" },
    input: z.object({ ...pageInput }),
    output: serviceCredentialList,
    handler: (input, { deps, caller }) => listServiceCredentials(deps, caller, input),
  }),
  defineTool({
    name: "service_credentials_create",
    title: "Create a service credential",
    description: "Creates a credential to sign requests with (HTTP Message Signatures); returns its secret once.",
    scope: "admin",
    reach: "bucket",
    http: { method: "POST", path: "/service-credentials", status: 201 },
    input: z.object({
      name: z.string().trim().min(1).max(100).describe("Credential name"),
      scopes: z.array(scope).min(1).max(4).default(["read"]).describe("admin implies the others"),
      bucketId: id("Bucket").optional().describe("Restrict the credential to this bucket"),
      expiresInDays: z.number().int().min(1).max(MAX_KEY_DAYS).default(DEFAULT_KEY_DAYS).describe("Lifetime in days"),
    }),
    output: serviceCredentialWithSecret,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => createServiceCredential(deps, caller, input),
  }),
  defineTool({
    name: "service_credentials_delete",
    title: "Delete a service credential",
    description: "Deletes a service credential; it stops working at once.",
    scope: "admin",
    reach: "bucket",
    http: { method: "DELETE", path: "/service-credentials/{id}" },
    input: z.object({ id: id("Service credential") }),
    output: deleted,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => deleteServiceCredential(deps, caller, input.id),
  }),
];
