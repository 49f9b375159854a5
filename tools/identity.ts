import { z } from "zod";
import { createApiKey, DEFAULT_KEY_DAYS, deleteApiKey, listApiKeys, MAX_KEY_DAYS, rotateApiKey } from "../domain/access/api-keys.ts";
import { me } from "../domain/access/identity.ts";
import { deleted, id, pageInput, scope } from "../contract/common.ts";
import { apiKeyList, apiKeyWithSecret, me as meOutput } from "../contract/identity.ts";
import { defineTool } from "./define.ts";

export const identityTools = [
  defineTool({
    name: "me_get",
    title: "Who am I",
    description: "This credential: user, organization, memberships, scopes, bucket, expiry.",
    scope: "any",
    reach: "bucket",
    http: { method: "GET", path: "/me" },
    input: z.object({}),
    output: meOutput,
    handler: (_input, { deps, caller }) => me(deps, caller),
    // Every field is nested: the generic line would be the noun alone.
    mcpSummary: (m) =>
      `${m.credential.type} ${m.credential.accessKeyId ?? m.user.email ?? m.user.id} in organization ${JSON.stringify(m.organization.name)}; ` +
      `scopes ${m.credential.scopes.join(", ") || "none"}${m.credential.bucketId ? `; restricted to bucket ${m.credential.bucketId}` : ""}`,
  }),
  defineTool({
    name: "api_keys_list",
    title: "List API keys",
    description: "API keys (never secrets), newest first.",
    scope: "admin",
    reach: "bucket",
    http: { method: "GET", path: "/api-keys" },
    input: z.object({ ...pageInput }),
    output: apiKeyList,
    handler: (input, { deps, caller }) => listApiKeys(deps, caller, input),
  }),
  defineTool({
    name: "api_keys_create",
    title: "Create an API key",
    description:
      "Creates a key; returns its secret (the bearer value) once. Never more scopes or buckets than its creator.",
    scope: "admin",
    reach: "bucket",
    http: { method: "POST", path: "/api-keys", status: 201 },
    input: z.object({
      name: z.string().trim().min(1).max(100).describe("Key name"),
      scopes: z.array(scope).min(1).max(4).default(["read"]).describe("admin implies the others"),
      bucketId: id("Bucket").optional().describe("Restrict the key to this bucket"),
      expiresInDays: z.number().int().min(1).max(MAX_KEY_DAYS).default(DEFAULT_KEY_DAYS).describe("Lifetime in days"),
    }),
    output: apiKeyWithSecret,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => createApiKey(deps, caller, input),
  }),
  defineTool({
    name: "api_keys_delete",
    title: "Delete an API key",
    description: "Deletes a key; its secret stops working at once.",
    scope: "admin",
    reach: "bucket",
    http: { method: "DELETE", path: "/api-keys/{id}" },
    input: z.object({ id: id("API key") }),
    output: deleted,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => deleteApiKey(deps, caller, input.id),
  }),
  defineTool({
    name: "api_keys_rotate",
    title: "Rotate an API key's secret",
    description: "Issues a new secret (returned once); the old one stops working at once.",
    scope: "admin",
    reach: "bucket",
    http: { method: "PUT", path: "/api-keys/{id}/rotate" },
    // Not idempotent: every call issues a different secret.
    annotations: { idempotentHint: false },
    input: z.object({ id: id("API key") }),
    output: apiKeyWithSecret,
    errors: ["not_found"],
    handler: (input, { deps, caller }) => rotateApiKey(deps, caller, input.id),
  }),
];
