import { z } from "zod";
import { id, listOf, scope, timestamp } from "./common.ts";

export const MEMBERSHIP_ROLES = ["owner", "member"] as const;
export type MembershipRole = (typeof MEMBERSHIP_ROLES)[number];

const apiKeyFields = {
  id: id("API key"),
  name: z.string(),
  accessKeyId: z.string().describe("Public identifier of the key (not the bearer value)"),
  scopes: z.array(scope),
  bucketId: id("Bucket").nullable().describe("The one bucket this key may use, or null for all"),
  expiresAt: timestamp("Expiry"),
  createdAt: timestamp("Creation time"),
  rotatedAt: timestamp("Last rotation").nullable(),
  expired: z.boolean(),
};

export const apiKey = z.object(apiKeyFields).meta({ id: "ApiKey" });
export type ApiKey = z.output<typeof apiKey>;

export const apiKeyList = listOf(apiKey);

/** What creating or rotating a key answers, the only time its secret is shown. */
export const apiKeyWithSecret = z
  .object({
    ...apiKeyFields,
    secret: z.string().regex(/^[0-9a-f]{64}$/).describe("The bearer value; returned only here, store it now"),
    note: z.string(),
  })
  .meta({ id: "ApiKeyWithSecret" });
export type ApiKeyWithSecret = z.output<typeof apiKeyWithSecret>;

export const me = z
  .object({
    user: z.object({ id: id("User"), email: z.string().nullable() }),
    organization: z.object({ id: id("Organization"), name: z.string() }),
    memberships: z.array(z.object({ organizationId: id("Organization"), organizationName: z.string(), role: z.enum(MEMBERSHIP_ROLES) })),
    credential: z.object({
      type: z.enum(["api_key", "jwt", "service_credential", "oauth"]).describe("service_credential: a signed request; oauth: an OAuth access token"),
      apiKeyId: id("API key").nullable(),
      serviceCredentialId: id("Service credential").nullable(),
      oauthGrantId: id("OAuth grant").nullable(),
      accessKeyId: z.string().nullable().describe("Public identifier: an API key's accessKeyId, a service credential's keyId, an OAuth client's client_id"),
      scopes: z.array(scope).describe("Effective scopes (admin expanded)"),
      bucketId: id("Bucket").nullable(),
      expiresAt: timestamp("Expiry").nullable(),
    }),
  })
  .meta({ id: "Me" });
export type Me = z.output<typeof me>;
