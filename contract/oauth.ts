import { z } from "zod";
import { id, listOf, scope, timestamp } from "./common.ts";

export const oauthGrant = z
  .object({
    id: id("OAuth grant"),
    clientId: z.string(),
    clientName: z.string(),
    userId: id("User"),
    scopes: z.array(scope),
    bucketId: id("Bucket").nullable(),
    resource: z.string().describe("Token audience"),
    createdAt: timestamp("Approval time"),
    refreshedAt: timestamp("Last refresh").nullable(),
    revokedAt: timestamp("Revocation time").nullable(),
    expiresAt: timestamp("Expiry"),
    active: z.boolean(),
  })
  .meta({ id: "OAuthGrant" });

export const oauthGrantList = listOf(oauthGrant);
