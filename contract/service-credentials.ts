import { z } from "zod";
import { id, listOf, scope, timestamp } from "./common.ts";

const fields = {
  id: id("Service credential"),
  name: z.string(),
  keyId: z.string().describe("The keyid a signed request names in Signature-Input (public, not the secret)"),
  scopes: z.array(scope),
  bucketId: id("Bucket").nullable().describe("The one bucket this credential may use, or null for all"),
  expiresAt: timestamp("Expiry"),
  createdAt: timestamp("Creation time"),
  expired: z.boolean(),
};

export const serviceCredential = z.object(fields).meta({ id: "ServiceCredential" });
export type ServiceCredential = z.output<typeof serviceCredential>;

export const serviceCredentialList = listOf(serviceCredential);

/** What creating a credential answers, the only time its secret is shown. */
export const serviceCredentialWithSecret = z
  .object({
    ...fields,
    secret: z.string().regex(/^[0-9a-f]{64}$/).describe("The HMAC-SHA256 key (its 64 characters, as text); returned only here, store it now"),
    note: z.string(),
  })
  .meta({ id: "ServiceCredentialWithSecret" });
export type ServiceCredentialWithSecret = z.output<typeof serviceCredentialWithSecret>;
